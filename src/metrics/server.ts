/**
 * Small HTTP endpoints on the main thread: `listenHttp` for any handler
 * (the dashboard's too), and MetricsServer, whose GET /metrics answers with
 * what `collect` renders at that moment (so a scrape reads the shared
 * counters then, never a copy kept by the data path); anything else is 404.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { ArgError } from '../errors.js';

/** Prometheus' content type for the text format. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** A listening HTTP server: the port bound (the kernel's pick for 0) and how to stop it. */
export interface HttpEndpoint {
  readonly port: number;
  /** Stops listening and ends open connections. */
  close(): void;
}

/**
 * Listens on host:port with `handler`.
 * @throws ArgError naming `option`, the address and the listen error (EADDRINUSE, EACCES, ENOTFOUND).
 */
export async function listenHttp(option: string, host: string, port: number, handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<HttpEndpoint> {
  const server: Server = createServer(handler);
  server.listen(port, host);
  try {
    await once(server, 'listening');
  } catch (e) {
    throw new ArgError(`${option}=${host}:${port}: cannot listen: ${(e as Error).message}`);
  }
  const addr = server.address();
  return {
    port: typeof addr === 'object' && addr ? addr.port : port,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

export class MetricsServer {
  private constructor(private readonly http: HttpEndpoint) {}

  /** The port bound. */
  get port(): number {
    return this.http.port;
  }

  /**
   * Serves GET /metrics from `collect` on host:port.
   * @throws ArgError naming `option` (what the user gave the address with) and the listen error.
   */
  static async listen(host: string, port: number, collect: () => string, option = '--metrics'): Promise<MetricsServer> {
    const http = await listenHttp(option, host, port, (req, res) => {
      if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /metrics\n');
        return;
      }
      let body: string;
      try {
        body = collect();
      } catch (e) {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics: ${(e as Error).message}\n`);
        return;
      }
      res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(body);
    });
    return new MetricsServer(http);
  }

  /** Stops listening and ends open connections. */
  close(): void {
    this.http.close();
  }
}

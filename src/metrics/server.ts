/**
 * A small HTTP endpoint on the main thread: GET /metrics answers with what
 * `collect` renders at that moment (so a scrape reads the shared counters
 * then, never a copy kept by the data path); anything else is 404.
 */
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { ArgError } from '../errors.js';

/** Prometheus' content type for the text format. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export class MetricsServer {
  private constructor(
    private readonly server: Server,
    /** The port bound (the one asked for, or the kernel's pick for 0). */
    readonly port: number,
  ) {}

  /**
   * Listens on host:port.
   * @throws ArgError naming the address and the listen error (EADDRINUSE, EACCES, ENOTFOUND).
   */
  static async listen(host: string, port: number, collect: () => string): Promise<MetricsServer> {
    const server = createServer((req, res) => {
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
    server.listen(port, host);
    try {
      await once(server, 'listening');
    } catch (e) {
      throw new ArgError(`--metrics=${host}:${port}: cannot listen: ${(e as Error).message}`);
    }
    const addr = server.address();
    return new MetricsServer(server, typeof addr === 'object' && addr ? addr.port : port);
  }

  /** Stops listening and ends open connections. */
  close(): void {
    this.server.closeAllConnections();
    this.server.close();
  }
}

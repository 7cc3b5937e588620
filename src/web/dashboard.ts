/**
 * The live dashboard: one self-contained page (uPlot's script and styles
 * inlined from the installed `uplot` package, nothing fetched from elsewhere)
 * and a server-sent event stream at /events with one point a second. Each
 * point is whatever `sample` returns; the page plots the series it names.
 * Runs on the main thread; viewers come and go without the producer knowing.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ServerResponse } from 'node:http';
import { listenHttp, type HttpEndpoint } from '../metrics/server.js';
import { DASHBOARD_SCRIPT } from './page.js';

/** One point: time (ms since the epoch) and named values; a name's first word groups it into a chart. */
export interface DashboardPoint {
  time: number;
  charts: Record<string, Record<string, number>>;
  /** Shown beside the title: forwarding or stopped. */
  forwarding: boolean;
  /** Counters the rates came from (e.g. `rx 0` packets), for a reader that checks them. */
  totals: Record<string, number>;
}

let uplot: { js: string; css: string } | undefined;
/** uPlot's built files, read once from the package. */
function uplotFiles(): { js: string; css: string } {
  if (!uplot) {
    const req = createRequire(import.meta.url);
    uplot = { js: readFileSync(req.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8'), css: readFileSync(req.resolve('uplot/dist/uPlot.min.css'), 'utf8') };
  }
  return uplot;
}

/** The page: uPlot and the dashboard script inline, so it works with no network beyond this server. */
export function dashboardPage(title: string): string {
  const u = uplotFiles();
  // Only a closing tag could end an inline script early.
  const esc = (s: string) => s.replace(/<\/(script)/gi, '<\\/$1');
  return `<!doctype html><html><head><meta charset="utf-8"><title>${title.replace(/[<&]/g, '')}</title>
<link rel="icon" href="data:,">
<style>${u.css}
body{font:14px system-ui,sans-serif;margin:1em}h1{font-size:1.2em}#charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:1em}</style>
</head><body><h1>${title.replace(/[<&]/g, '')} <small id="state"></small></h1><div id="charts"></div>
<script>${esc(u.js)}</script><script>${esc(DASHBOARD_SCRIPT)}</script></body></html>`;
}

export class Dashboard {
  private readonly viewers = new Set<ServerResponse>();
  private timer: NodeJS.Timeout | undefined;

  private constructor(private readonly http: HttpEndpoint) {}

  get port(): number {
    return this.http.port;
  }

  /** Viewers connected to /events now. */
  get connections(): number {
    return this.viewers.size;
  }

  /**
   * Listens on host:port and sends `sample()` to every viewer each `periodMs`.
   * @throws ArgError naming --web and the listen error.
   */
  static async listen(host: string, port: number, title: string, sample: () => DashboardPoint, periodMs = 1000): Promise<Dashboard> {
    const page = dashboardPage(title);
    let d: Dashboard | undefined;
    const http = await listenHttp('--web', host, port, (req, res) => {
      const path = (req.url ?? '').split('?')[0];
      if (req.method === 'GET' && path === '/') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(page);
      } else if (req.method === 'GET' && path === '/events' && d) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
        res.write('retry: 1000\n\n');
        d.viewers.add(res);
        res.on('close', () => d!.viewers.delete(res));
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      }
    });
    d = new Dashboard(http);
    const dash = d;
    dash.timer = setInterval(() => {
      if (dash.viewers.size === 0) return;
      const msg = `data: ${JSON.stringify(sample())}\n\n`;
      for (const v of dash.viewers) v.write(msg);
    }, periodMs);
    return dash;
  }

  /** Ends every event stream and stops listening. */
  close(): void {
    clearInterval(this.timer);
    for (const v of this.viewers) v.end();
    this.http.close();
  }
}

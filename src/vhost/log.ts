/**
 * Where the vhost-user transports report what a peer did wrong or that the
 * link changed: one line each (`net_vhost0: vhost-user /tmp/vh.sock: SET_MEM_TABLE:
 * region 0 ...; connection closed`). Stderr by default; an application (or a
 * test) installs its own sink. A peer's misbehaviour is reported, never thrown:
 * it happens on the event loop, where a throw would end the process.
 */
export type LogSink = (line: string) => void;

let sink: LogSink = (line) => process.stderr.write(line + '\n');

export function vhostLog(line: string): void {
  sink(line);
}

/** Installs `s` as the sink; @returns the previous one, to restore. */
export function setVhostLog(s: LogSink): LogSink {
  const prev = sink;
  sink = s;
  return prev;
}

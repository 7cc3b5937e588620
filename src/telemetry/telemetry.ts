/**
 * DPDK's telemetry v2 protocol (lib/telemetry/telemetry.c), without the
 * socket: a command registry and the function that turns one request message
 * into one reply message. The socket (server.ts) only moves bytes.
 *
 * A request is `cmd[,param]`; the reply is one JSON object `{"cmd": value}`,
 * `{"cmd":null}` when the command is unknown or refuses its parameter. Limits
 * are DPDK's: a request is read into 1024 bytes (the rest of a longer message
 * is lost), a command name has fewer than 56 characters, a reply at most
 * 16384 bytes (a longer one is replaced by null, never cut into bad JSON).
 */

/** DPDK's MAX_CMD_LEN: command names are shorter; the key of a reply is cut to it. */
export const MAX_CMD_LEN = 56;
/** DPDK's MAX_OUTPUT_LEN, announced in the handshake as max_output_len. */
export const MAX_OUTPUT_LEN = 16384;
/** DPDK's read buffer: `char buffer[1024]`, one byte kept for the terminating NUL. */
export const MAX_INPUT_LEN = 1023;
/** DPDK's MAX_CONNECTIONS: v2 clients served at once; more are closed on accept. */
export const MAX_CONNECTIONS = 10;
/** The version string of the handshake and /info: the DPDK release whose protocol this follows. */
export const TELEMETRY_VERSION = 'DPDK 22.11.0 (dpkit)';

/** A JSON value a command answers with; `undefined` means "refused" (DPDK's negative return): the reply is null. */
export type TelemetryValue = string | number | boolean | null | TelemetryValue[] | { [key: string]: TelemetryValue };

/** A command's handler: `param` is the text after the first comma, or undefined when there is none. */
export type TelemetryHandler = (param: string | undefined) => TelemetryValue | undefined;

interface Command {
  handler: TelemetryHandler;
  help: string;
}

/** The commands one process answers (rte_telemetry_register_cmd's table), with DPDK's built-in `/`, `/info` and `/help`. */
export class TelemetryRegistry {
  private readonly commands = new Map<string, Command>();

  constructor(readonly pid = process.pid) {
    this.register('/', 'Returns list of available commands, Takes no parameters', () => this.list());
    this.register('/info', 'Returns DPDK Telemetry information. Takes no parameters', () => this.info());
    this.register('/help', 'Returns help text for a command. Parameters: string command', (param) => {
      // DPDK answers a bare /help with its own help text, and null for an unknown command.
      if (param === undefined) return this.commands.get('/help')!.help;
      const c = this.commands.get(param);
      return c ? { [param]: c.help } : undefined;
    });
  }

  /**
   * Adds a command (rte_telemetry_register_cmd). Names start with `/` and are
   * shorter than MAX_CMD_LEN.
   * @throws Error for a bad or repeated name (a programming error).
   */
  register(cmd: string, help: string, handler: TelemetryHandler): void {
    if (!cmd.startsWith('/') || cmd.length >= MAX_CMD_LEN || this.commands.has(cmd)) throw new Error(`telemetry: cannot register command '${cmd}'`);
    this.commands.set(cmd, { handler, help });
  }

  /** Every command name, sorted as DPDK keeps them. */
  list(): string[] {
    return [...this.commands.keys()].sort();
  }

  /** The handshake object, also /info's value. */
  info(): { version: string; pid: number; max_output_len: number } {
    return { version: TELEMETRY_VERSION, pid: this.pid, max_output_len: MAX_OUTPUT_LEN };
  }

  /** The first message a v2 client receives on connecting. */
  handshake(): string {
    return JSON.stringify(this.info());
  }

  /**
   * Answers one request message (client_handler's loop body). Never throws:
   * a handler that throws answers null, as one that refuses its parameter.
   * @returns the reply text, at most MAX_OUTPUT_LEN bytes of UTF-8.
   */
  reply(request: Uint8Array): string {
    const { cmd, param } = parseRequest(request);
    const key = JSON.stringify((cmd ?? '(null)').slice(0, MAX_CMD_LEN));
    const c = cmd !== undefined && cmd.length < MAX_CMD_LEN ? this.commands.get(cmd) : undefined;
    let value: TelemetryValue | undefined;
    try {
      value = c?.handler(param);
    } catch {
      value = undefined;
    }
    const out = `{${key}:${value === undefined ? 'null' : JSON.stringify(value)}}`;
    return Buffer.byteLength(out) <= MAX_OUTPUT_LEN ? out : `{${key}:null}`;
  }
}

/**
 * Splits a request as DPDK's `strtok(buffer, ",")` then `strtok(NULL, "\0")`:
 * the text ends at the first NUL or after MAX_INPUT_LEN bytes, leading commas
 * are skipped, the command runs to the next comma and the parameter is the
 * rest (undefined when empty).
 */
export function parseRequest(request: Uint8Array): { cmd: string | undefined; param: string | undefined } {
  let end = Math.min(request.length, MAX_INPUT_LEN);
  const nul = request.subarray(0, end).indexOf(0);
  if (nul >= 0) end = nul;
  const text = Buffer.from(request.buffer, request.byteOffset, end).toString('utf8');
  let i = 0;
  while (i < text.length && text[i] === ',') i++;
  if (i === text.length) return { cmd: undefined, param: undefined };
  const comma = text.indexOf(',', i);
  if (comma < 0) return { cmd: text.slice(i), param: undefined };
  const param = text.slice(comma + 1);
  return { cmd: text.slice(i, comma), param: param === '' ? undefined : param };
}

/**
 * A numeric parameter as DPDK's ethdev commands take it: it must start with a
 * digit, is read by strtoul (base 0: `0x` hex, leading `0` octal) and what
 * follows the number is ignored.
 * @returns the number, or undefined when the parameter is missing or not a number.
 */
export function intParam(param: string | undefined): number | undefined {
  if (param === undefined || !/^[0-9]/.test(param)) return undefined;
  const m = /^0[xX]([0-9a-fA-F]+)/.exec(param) ?? /^0([0-7]+)/.exec(param);
  if (m) return parseInt(m[1]!, param[1] === 'x' || param[1] === 'X' ? 16 : 8);
  return Number(/^[0-9]+/.exec(param)![0]);
}

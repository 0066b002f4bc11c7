// The `.rdp` connect profile of an RDP route (pure renderer, golden tests in
// test/rdp-connect-file.test.ts). The format is Microsoft's Remote Desktop connection file: one
// setting a line, `name:type:value`, type `s` (string) or `i` (integer), read by mstsc, the Microsoft
// Remote Desktop apps and FreeRDP (`xfreerdp <file>.rdp`). Lines end in CRLF, the text is ASCII/UTF-8.
//
// What a route's fields become:
//   address                 full address:s:<host>:<port>          (an IPv6 host in brackets)
//   resolution null         screen mode id:i:2                     (full screen)
//   resolution WxH          screen mode id:i:1, desktopwidth:i:W, desktopheight:i:H
//   color_depth             session bpp:i:15|16|24|32
//   audio_mode              audiomode:i:0 (local: play here) | 1 (remote: leave at the remote computer) | 2 (off)
//   clipboard_enabled       redirectclipboard:i:1|0
//   network_level_auth      enablecredsspsupport:i:1 + authentication level:i:2 (warn when the server
//                           cannot be authenticated) | enablecredsspsupport:i:0 + authentication level:i:0
//   gateway_host(+_port)    gatewayhostname:s:<host>[:<port> unless 443], gatewayusagemethod:i:1 (always),
//                           gatewayprofileusagemethod:i:1 (these explicit settings);
//   no gateway pair         gatewayusagemethod:i:0, gatewayprofileusagemethod:i:1 (never a default RD gateway)
//   username/domain         username:s:, domain:s: (only when the caller passes them: the sidecar does
//                           not, the user name travels inside the client's credential envelope)
// The password is never part of a profile: this renderer has no input for it.
import net from 'node:net';

export type RdpAudioMode = 'local' | 'remote' | 'off';
export type RdpColorDepth = 15 | 16 | 24 | 32;

/** The route settings the profile honours (a subset of the RDP route view). */
export interface RdpProfileSettings {
  resolution: string | null;
  color_depth: RdpColorDepth;
  audio_mode: RdpAudioMode;
  clipboard_enabled: boolean;
  network_level_auth: boolean;
  gateway_host: string | null;
  gateway_port: number | null;
}

export interface RdpProfileInput extends RdpProfileSettings {
  /** Where the client connects: the address chosen for the route's access mode. */
  address: { host: string; port: number };
  /** Optional: the client may add the user name it decrypted; the sidecar passes none. */
  username?: string;
  domain?: string;
}

/** Input a profile cannot carry (a programming error: the route schema validates these fields). */
export class RdpFileError extends Error {}

export const RDP_RESOLUTION_RE = /^([1-9][0-9]{2,4})x([1-9][0-9]{2,4})$/;
const AUDIO: Record<RdpAudioMode, number> = { local: 0, remote: 1, off: 2 };
const DEFAULT_RD_GATEWAY_PORT = 443;

/** A string value: one line, no control characters (a newline would start another setting). */
function str(name: string, value: string): string {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) throw new RdpFileError(`${name} must not contain control characters`);
  return value;
}

function hostPort(name: string, host: string, port: number | null): string {
  if (!host || /\s/.test(host)) throw new RdpFileError(`${name} must be a host name or IP address`);
  str(name, host);
  const h = net.isIPv6(host) ? `[${host}]` : host;
  if (port === null) return h;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new RdpFileError(`${name} port must be 1-65535`);
  return `${h}:${port}`;
}

/** The `.rdp` text for one address of a route. */
export function renderRdpFile(input: RdpProfileInput): string {
  const lines: string[] = [];
  const s = (k: string, v: string) => lines.push(`${k}:s:${str(k, v)}`);
  const i = (k: string, v: number) => lines.push(`${k}:i:${v}`);

  s('full address', hostPort('full address', input.address.host, input.address.port));
  if (input.resolution === null) {
    i('screen mode id', 2);
  } else {
    const m = RDP_RESOLUTION_RE.exec(input.resolution);
    if (!m) throw new RdpFileError('resolution must be WIDTHxHEIGHT');
    i('screen mode id', 1);
    i('desktopwidth', Number(m[1]));
    i('desktopheight', Number(m[2]));
  }
  if (![15, 16, 24, 32].includes(input.color_depth)) throw new RdpFileError('color_depth must be 15, 16, 24 or 32');
  i('session bpp', input.color_depth);
  if (!(input.audio_mode in AUDIO)) throw new RdpFileError('audio_mode must be local, remote or off');
  i('audiomode', AUDIO[input.audio_mode]);
  i('redirectclipboard', input.clipboard_enabled ? 1 : 0);
  i('enablecredsspsupport', input.network_level_auth ? 1 : 0);
  i('authentication level', input.network_level_auth ? 2 : 0);
  if (input.gateway_host) {
    const port = input.gateway_port ?? DEFAULT_RD_GATEWAY_PORT;
    s('gatewayhostname', hostPort('gatewayhostname', input.gateway_host, port === DEFAULT_RD_GATEWAY_PORT ? null : port));
    i('gatewayusagemethod', 1);
  } else {
    i('gatewayusagemethod', 0);
  }
  i('gatewayprofileusagemethod', 1);
  if (input.username) s('username', input.username);
  if (input.domain) s('domain', input.domain);
  return lines.join('\r\n') + '\r\n';
}

/** The settings of a profile as a map (the reverse of renderRdpFile, for tests and clients). */
export function parseRdpFile(text: string): Map<string, { type: 's' | 'i'; value: string }> {
  const out = new Map<string, { type: 's' | 'i'; value: string }>();
  for (const line of text.split(/\r?\n/)) {
    if (!line) continue;
    const m = /^([^:]+):([si]):(.*)$/.exec(line);
    if (!m) throw new RdpFileError(`not an .rdp setting: ${line}`);
    out.set(m[1], { type: m[2] as 's' | 'i', value: m[3] });
  }
  return out;
}

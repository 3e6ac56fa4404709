// A failing request as a shell command that sends it again (curl, as Schemathesis prints one): method, URL,
// headers, body. Credentials are never printed: each secret the run sent (a password, a token or session a
// login gave) is written as the shell variable that holds it ("${PORTOLAN_ADMIN_PASSWORD}"), and a value a
// login gave is preceded by a comment saying how to get it. Every word is quoted for POSIX shells.
import type { HttpRequest } from './http.ts';
import { withoutCredentials } from './targets.ts';

/** A value that must not be printed, and the shell variable to print instead. */
export type Secret = {
  value: string;
  /** A shell variable name (`PORTOLAN_ADMIN_PASSWORD`). */
  variable: string;
  /** For a value a login gave: how to get it, as comment lines printed above the command. */
  origin?: () => string;
};

/** Bodies up to this size are printed in the command; a larger one is described instead. */
const MAX_SHOWN_BYTES = 64 * 1024;

/** A piece of a shell word: literal text, or a variable reference. */
type Piece = { text: string } | { variable: string };

/**
 * The request as a curl command. `secrets` are replaced by their variables wherever they occur (a Basic
 * `Authorization` header is written as `-u user:password` first, so the password inside it is found too).
 *
 * @example
 * curlCommand({ method: 'GET', url: 'http://127.0.0.1:8100/mgmt/tm/traffic/rule', headers: { authorization: 'Basic YWRtaW46cHc=' } },
 *   [{ value: 'pw', variable: 'PORTOLAN_ADMIN_PASSWORD' }]);
 * // curl -sS -i -X GET 'http://127.0.0.1:8100/mgmt/tm/traffic/rule' -u 'admin:'"${PORTOLAN_ADMIN_PASSWORD}"
 */
export function curlCommand(request: HttpRequest, secrets: readonly Secret[]): string {
  const ordered = variants(secrets);
  const used = new Set<Secret>();
  const word = (text: string) => quote(substitute(text, ordered, used));
  const args = ['curl', '-sS', '-i', '-X', word(request.method), word(withoutCredentials(request.url))];
  for (const [name, value] of Object.entries(request.headers)) {
    const basic = /^basic\s+(\S+)$/i.exec(value);
    const decoded = name.toLowerCase() === 'authorization' && basic ? Buffer.from(basic[1]!, 'base64').toString('utf8') : undefined;
    if (decoded?.includes(':')) args.push('-u', word(decoded));
    else args.push('-H', word(`${name}: ${value}`));
  }
  let input = '';
  if (request.body !== undefined) {
    const bytes = typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : Buffer.from(request.body);
    const text = bytes.toString('utf8');
    const uniform = bytes.length > 256 && bytes.every((b) => b === bytes[0]);
    if (uniform && bytes[0]! >= 0x20 && bytes[0]! < 0x7f) {
      // A body of one repeated character (a body over a size limit): made by the shell, not printed.
      input = `head -c ${bytes.length} /dev/zero | tr '\\0' ${quote([{ text: String.fromCharCode(bytes[0]!) }])} | `;
      args.push('--data-binary', '@-');
    } else if (!Buffer.from(text, 'utf8').equals(bytes) && ordered.some((v) => bytes.includes(Buffer.from(v.value, 'utf8')))) {
      // A body that is not UTF-8 text cannot have its credential replaced by a variable: it is not shown.
      args.push('--data-binary', '@body.bin');
      input = `# the ${bytes.length}-byte body holds a credential and is not shown: put it in body.bin\n`;
    } else if (bytes.length > MAX_SHOWN_BYTES) {
      args.push('--data-binary', '@body.bin');
      input = `# the ${bytes.length}-byte body is not shown: put it in body.bin\n`;
    } else if (Buffer.from(text, 'utf8').equals(bytes) && !/[\0-\x08\x0a-\x1f\x7f]/.test(text)) {
      // One line, as a literal (a body with line breaks or control bytes goes through printf, on one line too).
      args.push('--data-raw', word(text));
    } else {
      // Secrets stay variables here too: each one a %s of the format, its variable an argument.
      const pieces = Buffer.from(text, 'utf8').equals(bytes) ? substitute(text, ordered, used) : [{ text: '' }];
      const format = Buffer.from(text, 'utf8').equals(bytes)
        ? pieces.map((p) => ('variable' in p ? '%s' : printfEscape(Buffer.from(p.text, 'utf8')))).join('')
        : printfEscape(bytes);
      const values = pieces.filter((p) => 'variable' in p).map((p) => quote([p]));
      input = `printf -- '${format}'${values.map((v) => ` ${v}`).join('')} | `;
      args.push('--data-binary', '@-');
    }
  }
  const origins = secrets.filter((s) => used.has(s) && s.origin).map((s) => s.origin!());
  return [...origins, `${input}${args.join(' ')}`].join('\n');
}

type Variant = { value: string; secret: Secret };

/**
 * Every form a secret may take in a request (as is, percent-encoded in a URL or a form body, escaped in
 * JSON), longest first: each is printed as the secret's variable, so none is ever printed.
 */
function variants(secrets: readonly Secret[]): Variant[] {
  const found: Variant[] = [];
  for (const secret of secrets) {
    if (secret.value === '') continue;
    const forms = new Set([
      secret.value,
      encodeURIComponent(secret.value),
      new URLSearchParams({ v: secret.value }).toString().slice(2),
      JSON.stringify(secret.value).slice(1, -1),
    ]);
    for (const value of forms) found.push({ value, secret });
  }
  return found.sort((a, b) => b.value.length - a.value.length);
}

/** The text cut at every secret it holds, each secret a variable reference. */
function substitute(text: string, secrets: readonly Variant[], used: Set<Secret>): Piece[] {
  let pieces: Piece[] = [{ text }];
  for (const { value, secret } of secrets) {
    pieces = pieces.flatMap((piece) => {
      if (!('text' in piece) || !piece.text.includes(value)) return [piece];
      used.add(secret);
      const parts = piece.text.split(value);
      return parts.flatMap((part, i) => [...(i > 0 ? [{ variable: secret.variable }] : []), ...(part ? [{ text: part }] : [])]);
    });
  }
  return pieces;
}

/**
 * One shell word: literal text in single quotes (a quote inside as '\''), a variable as "${NAME}", side by side.
 *
 * @example quote([{ text: "it's " }, { variable: 'PW' }]) // 'it'\''s '"${PW}"
 */
export function quote(pieces: readonly Piece[]): string {
  if (pieces.length === 0) return "''";
  const only = pieces.length === 1 ? pieces[0]! : undefined;
  if (only && 'text' in only && /^[A-Za-z0-9_@%+=:,./-]+$/.test(only.text)) return only.text;
  return pieces.map((p) => ('variable' in p ? `"\${${p.variable}}"` : `'${p.text.replaceAll("'", "'\\''")}'`)).join('');
}

/** Bytes for printf's format, in single quotes: printable ASCII as is (% and \ escaped), the rest in octal. */
function printfEscape(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) {
    if (b === 0x25) out += '%%';
    else if (b === 0x5c) out += '\\\\';
    else if (b === 0x27) out += "'\\''";
    else if (b >= 0x20 && b < 0x7f) out += String.fromCharCode(b);
    else out += `\\${b.toString(8).padStart(3, '0')}`;
  }
  return out;
}

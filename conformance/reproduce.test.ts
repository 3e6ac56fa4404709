import { spawnSync } from 'node:child_process';
import t from 'tap';
import type { HttpRequest } from './http.ts';
import { curlCommand, quote, type Secret } from './reproduce.ts';

// Every failure comes with a curl command that sends its request again. Run here by a POSIX shell whose
// `curl` prints the arguments it got (and what it reads on stdin): they must be the request, exactly,
// with each secret coming from its shell variable, and no secret in the text of the command.

const PASSWORD = "p@ss 'wörd'$HOME&x=1%";
const TOKEN = 'tok-4f0e9a2b7c1d';
const secrets: Secret[] = [
  { value: PASSWORD, variable: 'PORTOLAN_ADMIN_PASSWORD' },
  {
    value: TOKEN,
    variable: 'VENDOR_AUTH_TOKEN',
    origin: () => '# VENDOR_AUTH_TOKEN: the value at /token/token of the answer to this login:',
  },
];

/** Runs the command with a curl that prints its arguments, NUL-separated, then its stdin after a marker. */
function runInShell(command: string, password = PASSWORD): { args: string[]; stdin: string } {
  const fakeCurl = `curl() { for a in "$@"; do printf '%s\\0' "$a"; done; printf 'STDIN:'; cat; }`;
  const out = spawnSync('sh', ['-c', `${fakeCurl}\n{\n${command}\n} < /dev/null`], {
    env: { PATH: process.env.PATH, PORTOLAN_ADMIN_PASSWORD: password, VENDOR_AUTH_TOKEN: TOKEN },
    encoding: 'buffer',
  });
  t.equal(out.status, 0, `the shell ran it (${out.stderr.toString()})`);
  const marker = out.stdout.lastIndexOf('STDIN:');
  const args = out.stdout.subarray(0, marker).toString('utf8').split('\0').slice(0, -1);
  return { args, stdin: out.stdout.subarray(marker + 'STDIN:'.length).toString('latin1') };
}

const option = (args: string[], name: string) => args.flatMap((a, i) => (a === name ? [args[i + 1]!] : []));

t.test('a JSON request with a password and a login token: the same request, the secrets from their variables', async (t) => {
  const request: HttpRequest = {
    method: 'POST',
    url: "http://127.0.0.1:8100/mgmt/x?q=a b&it's=1",
    headers: {
      'content-type': 'application/json',
      'x-vendor-auth-token': TOKEN,
      authorization: `Basic ${Buffer.from(`admin:${PASSWORD}-not-this-one`).toString('base64')}`,
    },
    body: JSON.stringify({ username: 'admin', password: PASSWORD, note: "it's" }),
  };
  const command = curlCommand(request, secrets);
  t.notMatch(command, PASSWORD, 'no password in the command');
  t.notMatch(command, TOKEN, 'no token');
  t.notMatch(command, Buffer.from(`admin:${PASSWORD}-not-this-one`).toString('base64'), 'no Basic credentials');
  t.match(command, /^# VENDOR_AUTH_TOKEN: the value at \/token\/token of the answer to this login:\ncurl /, 'how to get the token, first');
  t.match(command, '"${PORTOLAN_ADMIN_PASSWORD}"');
  const { args } = runInShell(command);
  t.same(option(args, '-X'), ['POST']);
  t.same(
    args.filter((a) => a.startsWith('http')),
    [request.url],
  );
  t.same(option(args, '-u'), [`admin:${PASSWORD}-not-this-one`], 'Basic credentials as -u, the password from its variable');
  t.same(option(args, '-H').sort(), ['content-type: application/json', `x-vendor-auth-token: ${TOKEN}`]);
  t.same(option(args, '--data-raw'), [request.body], 'the body, byte for byte');
});

t.test('a password percent-encoded in a URL or a form body is never shown either', async (t) => {
  const body = new URLSearchParams({ userid: 'admin', passwd: PASSWORD }).toString();
  const url = `http://h/login?password=${encodeURIComponent(PASSWORD)}`;
  const command = curlCommand({ method: 'POST', url, headers: {}, body }, secrets);
  // Run with the variable holding something else: what the command itself holds shows.
  const { args } = runInShell(command, 'FROM-THE-VARIABLE');
  t.same(
    args.filter((a) => a.startsWith('http')),
    ['http://h/login?password=FROM-THE-VARIABLE'],
    'not in the URL',
  );
  t.same(option(args, '--data-raw'), ['userid=admin&passwd=FROM-THE-VARIABLE'], 'not in the form body (spaces as +)');
});

t.test('a password escaped in a JSON body is never shown either (reproduced exactly only when it needs no escaping)', async (t) => {
  const quoted = 'a"b\\c';
  const body = JSON.stringify({ password: quoted });
  const command = curlCommand({ method: 'POST', url: 'http://h/login', headers: {}, body }, [
    { value: quoted, variable: 'PORTOLAN_ADMIN_PASSWORD' },
  ]);
  t.same(option(runInShell(command, 'X').args, '--data-raw'), ['{"password":"X"}']);
});

t.test('a binary body and a body over a size limit go through the shell, the same bytes', async (t) => {
  const bytes = new Uint8Array([0x2d, 0x2d, 0x0d, 0x0a, 0x00, 0xff, 0x25, 0x5c, 0x27, 0x41]);
  const binary = runInShell(curlCommand({ method: 'POST', url: 'http://h/upload', headers: {}, body: bytes }, secrets));
  t.same(option(binary.args, '--data-binary'), ['@-']);
  t.same([...Buffer.from(binary.stdin, 'latin1')], [...bytes], 'printf makes the same bytes');

  const large = runInShell(curlCommand({ method: 'POST', url: 'http://h/api/charts', headers: {}, body: ' '.repeat(5000) }, secrets));
  t.equal(large.stdin, ' '.repeat(5000), 'head and tr make the same 5000 spaces');

  const lines = `line one\nline two with ${PASSWORD}\n`;
  const command = curlCommand({ method: 'PUT', url: 'http://h/x', headers: {}, body: lines }, secrets);
  t.equal(command.split('\n').length, 1, 'a body with line breaks stays on one line');
  t.notMatch(command, PASSWORD);
  t.equal(Buffer.from(runInShell(command).stdin, 'latin1').toString('utf8'), lines, 'with the password from its variable');
});

t.test('quote: single quotes for text, double quotes for variables, bare for plain words', async (t) => {
  t.equal(quote([{ text: "it's" }]), "'it'\\''s'");
  t.equal(quote([{ text: 'a' }, { variable: 'PW' }, { text: 'b' }]), `'a'"\${PW}"'b'`);
  t.equal(quote([{ text: 'GET' }]), 'GET');
  t.equal(quote([]), "''");
});

t.test('a body that is not UTF-8 text and holds a credential is not shown at all', async (t) => {
  const bytes = Buffer.concat([Buffer.from([0xff, 0xfe, 0x00]), Buffer.from(TOKEN, 'utf8'), Buffer.from([0x80])]);
  const command = curlCommand({ method: 'POST', url: 'http://h/upload', headers: {}, body: bytes }, secrets);
  t.notMatch(command, TOKEN);
  t.notMatch(command, /\\164\\157\\153/, 'nor its bytes in octal');
  t.match(command, /holds a credential and is not shown: put it in body\.bin/);
  t.match(command, /--data-binary @body\.bin/);
});

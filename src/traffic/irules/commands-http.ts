// The rule language's HTTP commands, on the plain views of types.ts: the request in HTTP_REQUEST, the
// member's answer (status, headers) in HTTP_RESPONSE. What a rule writes on the wire is checked: header
// names are tokens, values and targets carry no line break, so a rule cannot split a message.
import { arity, checkHeader, checkTarget, flag, headersOf, reader, requestOf, sameName } from './command-kit.ts';
import type { CommandSpec, Run } from './model.ts';
import { TclError } from './signals.ts';
import type { HeaderList } from './types.ts';
import { formatList, parseIntArg } from './values.ts';

const splitTarget = (uri: string): [path: string, query: string | undefined] => {
  const mark = uri.indexOf('?');
  return mark === -1 ? [uri, undefined] : [uri.slice(0, mark), uri.slice(mark + 1)];
};

function setTarget(run: Run, name: string, target: string): string {
  if (run.event !== 'HTTP_REQUEST') throw new TclError(`${name} can change the request only in HTTP_REQUEST`);
  checkTarget(target, `the request target set by ${name}`);
  requestOf(run, name).uri = target;
  return '';
}

function lastValue(headers: HeaderList, name: string): string | undefined {
  for (let i = headers.length - 1; i >= 0; i--) if (sameName(headers[i]![0], name)) return headers[i]![1];
  return undefined;
}

type HeaderSub = { usage: string; run(run: Run, headers: HeaderList, args: string[]): string };

const HEADER_SUBCOMMANDS: Record<string, HeaderSub> = {
  value: { usage: 'HTTP::header value name', run: (_, headers, [name]) => lastValue(headers, name!) ?? '' },
  values: {
    usage: 'HTTP::header values name',
    run: (_, headers, [name]) => formatList(headers.filter(([n]) => sameName(n, name!)).map(([, v]) => v)),
  },
  exists: { usage: 'HTTP::header exists name', run: (_, headers, [name]) => flag(lastValue(headers, name!) !== undefined) },
  names: { usage: 'HTTP::header names', run: (_, headers) => formatList(headers.map(([n]) => n)) },
  count: {
    usage: 'HTTP::header count ?name?',
    run: (_, headers, [name]) => String(name === undefined ? headers.length : headers.filter(([n]) => sameName(n, name)).length),
  },
  insert: {
    usage: 'HTTP::header insert ?lws? name value ?name value ...?',
    run(run, headers, args) {
      const pairs = args[0] === 'lws' ? args.slice(1) : args;
      if (pairs.length === 0 || pairs.length % 2 === 1) throw new TclError(`wrong # args: should be "${this.usage}"`);
      for (let i = 0; i < pairs.length; i += 2) checkHeader(pairs[i]!, pairs[i + 1]!);
      for (let i = 0; i < pairs.length; i += 2) headers.push([pairs[i]!, pairs[i + 1]!]);
      run.charge(pairs.join('').length);
      return '';
    },
  },
  replace: {
    usage: 'HTTP::header replace name ?value?',
    run(_, headers, [name, value = '']) {
      checkHeader(name!, value);
      for (let i = headers.length - 1; i >= 0; i--) {
        if (sameName(headers[i]![0], name!)) {
          headers[i] = [headers[i]![0], value];
          return '';
        }
      }
      headers.push([name!, value]);
      return '';
    },
  },
  remove: {
    usage: 'HTTP::header remove name',
    run(_, headers, [name]) {
      for (let i = headers.length - 1; i >= 0; i--) if (sameName(headers[i]![0], name!)) headers.splice(i, 1);
      return '';
    },
  },
};

const HEADER_ARITY: Record<string, [number, number]> = {
  value: [1, 1],
  values: [1, 1],
  exists: [1, 1],
  names: [0, 0],
  count: [0, 1],
  insert: [2, 64],
  replace: [1, 2],
  remove: [1, 1],
};

function respond(run: Run, args: string[]): string {
  if (run.event === 'CLIENT_ACCEPTED') throw new TclError('HTTP::respond is not valid in CLIENT_ACCEPTED: there is no HTTP request yet');
  let i = args[0] === '-reset' ? 1 : 0;
  const status = parseIntArg(args[i++] ?? '');
  if (!(status >= 200 && status <= 599)) throw new TclError(`HTTP::respond status must be 200 to 599, not ${status}`);
  let body = '';
  let server = true;
  const headers: HeaderList = [];
  while (i < args.length) {
    const word = args[i]!;
    if (word === '-version') i += 2;
    else if (word === 'content') {
      if (i + 1 >= args.length) throw new TclError('HTTP::respond content needs a value');
      body = args[i + 1]!;
      i += 2;
    } else if (word === 'noserver') {
      server = false;
      i++;
    } else {
      if (i + 1 >= args.length) throw new TclError(`HTTP::respond header "${word.slice(0, 40)}" has no value`);
      checkHeader(word, args[i + 1]!);
      headers.push([word, args[i + 1]!]);
      i += 2;
    }
  }
  // As the real device: a `Server` header names it unless `noserver` is given.
  if (server && !headers.some(([name]) => sameName(name, 'Server'))) headers.push(['Server', 'BIG-IP']);
  run.answer({ kind: 'respond', status, headers, body });
  return '';
}

export const HTTP_COMMANDS: CommandSpec[] = [
  {
    name: 'HTTP::uri',
    summary: 'The request target (path and query); with an argument, sets it (HTTP_REQUEST).',
    forms: ['HTTP::uri', 'HTTP::uri newTarget'],
    run(run, args) {
      arity(args, 0, 1, 'HTTP::uri ?uri?');
      return args.length === 1 ? setTarget(run, 'HTTP::uri', args[0]!) : requestOf(run, 'HTTP::uri').uri;
    },
  },
  {
    name: 'HTTP::path',
    summary: 'The path of the request target, without the query; with an argument, sets it and keeps the query.',
    forms: ['HTTP::path', 'HTTP::path newPath'],
    run(run, args) {
      arity(args, 0, 1, 'HTTP::path ?path?');
      const [path, query] = splitTarget(requestOf(run, 'HTTP::path').uri);
      return args.length === 1 ? setTarget(run, 'HTTP::path', query === undefined ? args[0]! : `${args[0]}?${query}`) : path;
    },
  },
  {
    name: 'HTTP::query',
    summary: 'The query of the request target, without the `?` ("" when none); with an argument, sets it.',
    forms: ['HTTP::query', 'HTTP::query newQuery'],
    run(run, args) {
      arity(args, 0, 1, 'HTTP::query ?query?');
      const [path, query] = splitTarget(requestOf(run, 'HTTP::query').uri);
      return args.length === 1 ? setTarget(run, 'HTTP::query', args[0] === '' ? path : `${path}?${args[0]}`) : (query ?? '');
    },
  },
  {
    name: 'HTTP::host',
    summary: 'The value of the request’s Host header ("" when none).',
    forms: ['HTTP::host'],
    run: reader('HTTP::host', (run) => lastValue(requestOf(run, 'HTTP::host').headers, 'host') ?? ''),
  },
  {
    name: 'HTTP::method',
    summary: 'The request method.',
    forms: ['HTTP::method'],
    run: reader('HTTP::method', (run) => requestOf(run, 'HTTP::method').method),
  },
  {
    name: 'HTTP::version',
    summary: 'The request’s HTTP version (`1.1`, `1.0`).',
    forms: ['HTTP::version'],
    run: reader('HTTP::version', (run) => requestOf(run, 'HTTP::version').version),
  },
  {
    name: 'HTTP::status',
    summary: 'The status of the member’s answer (HTTP_RESPONSE).',
    forms: ['HTTP::status'],
    run(run, args) {
      arity(args, 0, 0, 'HTTP::status');
      if (run.event !== 'HTTP_RESPONSE' || !run.response) throw new TclError('HTTP::status is valid only in HTTP_RESPONSE');
      return String(run.response.status);
    },
  },
  {
    name: 'HTTP::header',
    summary:
      'Reads and changes the headers (the request’s; the answer’s in HTTP_RESPONSE). Names are case-insensitive; `value` reads the last of several.',
    forms: ['HTTP::header name', ...Object.values(HEADER_SUBCOMMANDS).map((sub) => sub.usage)],
    shape: (args) => (args.length === 0 ? 'wrong # args: should be "HTTP::header ?subcommand? name ?value?"' : []),
    run(run, args) {
      const headers = headersOf(run, 'HTTP::header');
      const sub = args.length >= 1 && Object.hasOwn(HEADER_SUBCOMMANDS, args[0]!) ? args[0]! : undefined;
      if (sub === undefined || (args.length === 1 && sub !== 'names' && sub !== 'count')) {
        // `HTTP::header <name>` is `HTTP::header value <name>`.
        arity(args, 1, 1, 'HTTP::header name');
        return lastValue(headers, args[0]!) ?? '';
      }
      const rest = args.slice(1);
      const [min, max] = HEADER_ARITY[sub]!;
      arity(rest, min, max, HEADER_SUBCOMMANDS[sub]!.usage);
      if (
        sub !== 'value' &&
        sub !== 'values' &&
        sub !== 'exists' &&
        sub !== 'names' &&
        sub !== 'count' &&
        run.event === 'CLIENT_ACCEPTED'
      ) {
        throw new TclError('HTTP::header is not valid in CLIENT_ACCEPTED');
      }
      return HEADER_SUBCOMMANDS[sub]!.run(run, headers, rest);
    },
  },
  {
    name: 'HTTP::respond',
    summary:
      'Answers the client with this status, body and headers instead of the member (a `Server: BIG-IP` header unless `noserver`); the first answer of an event wins.',
    forms: ['HTTP::respond status ?content body? ?noserver? ?name value ...?'],
    run: respond,
  },
  {
    name: 'HTTP::redirect',
    summary: 'Answers the client with a 302 to this URL (`Location`); the first answer of an event wins.',
    forms: ['HTTP::redirect url'],
    run(run, args) {
      arity(args, 1, 1, 'HTTP::redirect url');
      if (run.event === 'CLIENT_ACCEPTED')
        throw new TclError('HTTP::redirect is not valid in CLIENT_ACCEPTED: there is no HTTP request yet');
      checkHeader('Location', args[0]!);
      run.answer({ kind: 'respond', status: 302, headers: [['Location', args[0]!]], body: '' });
      return '';
    },
  },
];

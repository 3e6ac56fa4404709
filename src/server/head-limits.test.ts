import t from 'tap';
import { headRefusal, headerSectionBytes, overflowRefusal, parserHeadLimit } from './head-limits.ts';

const limits = { maxUrlLength: 100, maxHeaderBytes: 200 };
const codeOf = (packet: string, bytesParsed = packet.length) => overflowRefusal(limits, Buffer.from(packet, 'latin1'), bytesParsed).code;

t.test('the parser limit sits above both limits together', async (t) => {
  t.ok(parserHeadLimit(limits) > limits.maxUrlLength + limits.maxHeaderBytes);
});

t.test('a parsed head: the target is judged first, then the field count, then the header bytes', async (t) => {
  t.equal(headerSectionBytes(['Host', 'x']), 'Host: x\r\n'.length);
  t.equal(headRefusal(limits, `/${'u'.repeat(100)}`, ['X', 'y'.repeat(500)])?.code, 'uriTooLong');
  t.equal(headRefusal(limits, '/', ['X', 'y'.repeat(500)])?.code, 'headersTooLarge');
  t.match(
    headRefusal(
      { maxUrlLength: 100, maxHeaderBytes: 1e6 },
      '/',
      Array.from({ length: 4002 }, () => 'a'),
    ),
    { code: 'headersTooLarge', message: 'The request has more than 2000 header fields.' },
  );
  t.equal(
    headRefusal(
      { maxUrlLength: 100, maxHeaderBytes: 1e6 },
      '/',
      Array.from({ length: 4000 }, () => 'a'),
    ),
    undefined,
    '2000 fields are read',
  );
  t.equal(headRefusal(limits, `/${'u'.repeat(99)}`, ['Host', 'x']), undefined);
});

t.test('an overflow in the request line, or past a request line over its limit, is 414', async (t) => {
  t.equal(codeOf(`GET /${'u'.repeat(400)}`), 'uriTooLong', 'the line has not ended');
  t.equal(codeOf(`${'u'.repeat(400)} HTTP/1.1\r\nHost: x\r\n`, 400), 'uriTooLong', 'a later piece of a line that has not ended');
  t.equal(codeOf(`GET /${'u'.repeat(150)} HTTP/1.1\r\nX: ${'b'.repeat(400)}`), 'uriTooLong', 'the line ended past the target limit');
  t.equal(codeOf(`GET / HTTP/1.1\r\n\r\nGET /${'u'.repeat(400)}`), 'uriTooLong', 'a second request on the connection, in the same packet');
});

t.test('an overflow past a request line within its limit is 431', async (t) => {
  t.equal(codeOf(`GET /short HTTP/1.1\r\nX: ${'b'.repeat(400)}`), 'headersTooLarge');
  t.equal(
    codeOf(`GET / HTTP/1.1\r\n\r\nGET /short HTTP/1.1\r\nX: ${'b'.repeat(400)}`),
    'headersTooLarge',
    'a second request on the connection',
  );
  t.equal(overflowRefusal(limits, undefined, undefined).code, 'headersTooLarge', 'nothing known: the headers');
  t.notMatch(
    overflowRefusal(limits, Buffer.from(`GET /s3cret HTTP/1.1\r\nX: ${'b'.repeat(400)}`), 400).message,
    /s3cret|bbb/,
    'nothing of the request in the message',
  );
});

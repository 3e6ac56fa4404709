import t from 'tap';
import { isWebLink, pdfText } from './pdf-text.ts';

t.test('text keeps Windows-1252 and replaces what the standard fonts cannot show', async (t) => {
  t.equal(pdfText('Größe — 10 € “ok” …'), 'Größe — 10 € “ok” …');
  t.equal(pdfText('日本 😀'), '?? ?', 'one ? per character, not per UTF-16 unit');
  t.equal(pdfText('a\u0000b\u001fc\u007fd'), 'a b c d', 'controls become spaces');
  t.equal(pdfText('lone \uD800 surrogate'), 'lone ? surrogate');
  t.equal(pdfText('e\u0301'), 'é', 'composed (NFC) before the check');
  t.equal(pdfText('one\r\ntwo\rthree\nfour'), 'one two three four', 'one line unless multiline');
  t.equal(pdfText('one\r\ntwo\u2028three', { multiline: true }), 'one\ntwo three');
});

t.test('only http and https URLs become links', async (t) => {
  for (const url of ['https://support.example.com/kb/1', 'http://x.example/a?b=c&d']) t.ok(isWebLink(url), url);
  for (const url of ['javascript:alert(1)', 'file:///etc/passwd', 'data:text/html,x', 'https://a b', 'support.example.com', ''])
    t.notOk(isWebLink(url), url);
});

import t from 'tap';
import { lastingBody, serializedBody } from './lasting-body.ts';

t.test('a lasting body is serialised once, and frozen all the way down so its bytes cannot go stale', async (t) => {
  const data = [{ id: 'grenville', position: '47°34′N' }];
  const body = lastingBody({ status: 'success', data });
  t.equal(body.data, data, 'the handler keeps its value as it is');
  const bytes = serializedBody(body);
  t.ok(Buffer.isBuffer(bytes));
  t.same(JSON.parse(bytes!.toString('utf8')), { status: 'success', data: [{ id: 'grenville', position: '47°34′N' }] });
  t.equal(serializedBody(body), bytes, 'the same bytes every time');
  t.throws(() => {
    (data[0] as { id: string }).id = 'changed';
  }, TypeError);
  t.throws(() => {
    data.push({ id: 'another', position: '' });
  }, TypeError);
});

t.test('any other body has no serialised form', async (t) => {
  t.equal(serializedBody({ status: 'success' }), undefined);
  t.equal(serializedBody('text'), undefined);
  t.equal(serializedBody(undefined), undefined);
  t.equal(serializedBody(null), undefined);
});

import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createFakeClock } from '../lib/clock.ts';
import { createQlogTrace } from './qlog.ts';
import { waitFor } from './test-servers.ts';

type QlogFile = {
  qlog_version: string;
  qlog_format: string;
  title: string;
  traces: {
    vantage_point: { type: string };
    common_fields: { reference_time: number; time_format: string };
    events: { time: number; name: string; data: unknown }[];
  }[];
};

/** What is in the file so far (the stream opens it asynchronously). */
const textOf = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : '');

t.test('events reach the file in order as they happen; close() makes it one valid qlog 0.3 JSON document', async (t) => {
  const clock = createFakeClock();
  const file = join(t.testdir(), 'trace0.qlog');
  const trace = createQlogTrace(file, { clock, title: 'data plane' });
  trace.event('transport:connection_started', { src_ip: '127.0.0.1', src_port: 50000 });
  clock.advance(5);
  trace.event('http:request', { method: 'GET', path: '/a', status: 200 });

  t.ok(await waitFor(() => textOf(file).includes('http:request')), 'the second event is on disk before close');
  const open = readFileSync(file, 'utf8');
  t.ok(open.indexOf('transport:connection_started') < open.indexOf('http:request'), 'in the order they happened');
  t.throws(() => JSON.parse(open), 'an open trace is not yet a whole document');

  await trace.close();
  trace.event('http:request', { path: '/after-close' });
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as QlogFile;
  t.match(parsed, { qlog_version: '0.3', qlog_format: 'JSON', title: 'data plane' });
  const [only] = parsed.traces;
  t.same(only!.vantage_point, { type: 'server' });
  t.same(only!.common_fields, { reference_time: Date.parse('2026-01-01T00:00:00Z'), time_format: 'relative' });
  t.same(
    only!.events,
    [
      { time: 0, name: 'transport:connection_started', data: { src_ip: '127.0.0.1', src_port: 50000 } },
      { time: 5, name: 'http:request', data: { method: 'GET', path: '/a', status: 200 } },
    ],
    'times are relative to the reference time; nothing after close',
  );
});

t.test('a trace without events is a valid document too, and closing twice is harmless', async (t) => {
  const file = join(t.testdir(), 'empty.qlog');
  const trace = createQlogTrace(file, { clock: createFakeClock(), title: 'empty' });
  await trace.close();
  await trace.close();
  t.same((JSON.parse(readFileSync(file, 'utf8')) as QlogFile).traces[0]!.events, []);
});

t.test('a file that cannot be written is reported once; events are dropped and close() still resolves', async (t) => {
  const errors: string[] = [];
  const trace = createQlogTrace(join(t.testdir(), 'missing-dir', 'trace0.qlog'), {
    clock: createFakeClock(),
    title: 'x',
    onError: (e) => errors.push((e as NodeJS.ErrnoException).code ?? ''),
  });
  t.ok(await waitFor(() => errors.length > 0));
  trace.event('http:request', {});
  await trace.close();
  t.same(errors, ['ENOENT']);
});

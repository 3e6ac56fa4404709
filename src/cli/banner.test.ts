// The lines `portolan start` prints once it runs (main.test.ts checks them on a real start).
import t from 'tap';
import { startBanner } from './banner.ts';

const roles = [
  { role: 'gateway', url: 'http://127.0.0.1:8080' },
  { role: 'diagnostics', url: 'http://[::1]:18300' },
];

t.test('every role with its URL and its reference pages, then how to stop', async (t) => {
  t.equal(
    startBanner(roles, { docs: true }),
    [
      'gateway      http://127.0.0.1:8080  docs: http://127.0.0.1:8080/docs',
      'diagnostics  http://[::1]:18300     docs: http://[::1]:18300/docs',
      'Portolan is running. Press Ctrl-C to stop it.',
      '',
    ].join('\n'),
  );
});

t.test('no /docs link when the reference pages are off', async (t) => {
  t.equal(
    startBanner(roles, { docs: false }),
    'gateway      http://127.0.0.1:8080\ndiagnostics  http://[::1]:18300\nPortolan is running. Press Ctrl-C to stop it.\n',
  );
});

t.test('a role listening on every address is shown at the loopback address', async (t) => {
  t.equal(
    startBanner(
      [
        { role: 'gateway', url: 'http://0.0.0.0:8080' },
        { role: 'mapping', url: 'http://[::]:8081' },
      ],
      { docs: true },
    ),
    'gateway      http://127.0.0.1:8080  docs: http://127.0.0.1:8080/docs\nmapping      http://[::1]:8081      docs: http://[::1]:8081/docs\nPortolan is running. Press Ctrl-C to stop it.\n',
  );
});

t.test('with several workers, the banner says how many processes serve the roles', async (t) => {
  t.equal(
    startBanner(roles.slice(0, 1), { docs: false, workers: 4 }),
    'gateway      http://127.0.0.1:8080\nPortolan is running in 4 worker processes. Press Ctrl-C to stop it.\n',
  );
  t.match(startBanner(roles.slice(0, 1), { docs: false, workers: 1 }), /^Portolan is running\. Press Ctrl-C/m, 'one worker: as before');
});

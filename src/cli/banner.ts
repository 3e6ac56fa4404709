// What `portolan start` prints once every role listens: each role's URL and, when the reference pages are on,
// its /docs page; then how many processes serve them (with --workers) and how to stop. One role a line, the role's name first (scripts read `<role> <url>`).

/** A role as the banner shows it. */
export type BannerRole = { role: string; url: string };

/**
 * The lines printed when the reference system runs.
 *
 * @example
 * startBanner([{ role: 'gateway', url: 'http://127.0.0.1:8080' }], { docs: true })
 * // 'gateway      http://127.0.0.1:8080  docs: http://127.0.0.1:8080/docs\nPortolan is running. Press Ctrl-C to stop it.\n'
 */
export function startBanner(roles: readonly BannerRole[], options: { docs: boolean; workers?: number }): string {
  const shown = roles.map(({ role, url }) => ({ role, url: reachable(url) }));
  const urlWidth = Math.max(0, ...shown.map(({ url }) => url.length));
  const lines = shown.map(({ role, url }) =>
    options.docs ? `${role.padEnd(12)} ${url.padEnd(urlWidth)}  docs: ${url}/docs` : `${role.padEnd(12)} ${url}`,
  );
  const running = (options.workers ?? 1) > 1 ? `Portolan is running in ${options.workers} worker processes.` : 'Portolan is running.';
  return `${[...lines, `${running} Press Ctrl-C to stop it.`].join('\n')}\n`;
}

/** A role listening on every address (0.0.0.0, ::) is shown at the loopback address: a URL a browser opens. */
const reachable = (url: string) => url.replace('//0.0.0.0:', '//127.0.0.1:').replace('//[::]:', '//[::1]:');

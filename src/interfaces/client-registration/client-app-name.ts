export type Agent = 'android' | 'ios' | 'default';

/**
 * The `<agent>` of a created application's name (seed D): `android` when the User-Agent contains
 * `android`, `ios` when it contains `ios` (both case-insensitive; android is tested first, so an
 * Android agent that also mentions iOS is android), otherwise `default`.
 *
 * @example
 * agentOf('okhttp/4.12.0 (Linux; Android 14)') // 'android'
 */
export function agentOf(userAgent: string | readonly string[] | undefined): Agent {
  const text = [userAgent ?? ''].flat().join(' ').toLowerCase();
  if (text.includes('android')) return 'android';
  if (text.includes('ios')) return 'ios';
  return 'default';
}

/**
 * `<username>-<agent>-<seconds>`, the `name` and `appName` of the application registration
 * creates; every `@` of the username becomes `.`.
 *
 * @example
 * clientAppName('alice@example.com', 'android', 1715679000) // 'alice.example.com-android-1715679000'
 */
export function clientAppName(username: string, agent: Agent, epochSeconds: number): string {
  return `${username.replaceAll('@', '.')}-${agent}-${epochSeconds}`;
}

import { createHmac, randomBytes } from 'node:crypto';
import type { Clock } from '../lib/clock.ts';

export type LoginBackoffOptions = {
  /** Failed logins in a row per user name that are checked freely (default 5); 0 turns the backoff off. */
  failuresBeforeBackoff?: number;
  /** The wait after the last free failure (default 1 s); each further failure doubles it. */
  firstDelayMs?: number;
  /** The longest wait (default 60 s): it bounds how long an attacker can keep the real user out. */
  maxDelayMs?: number;
  /** Most user names remembered; the least recently tried is forgotten past it (default 10 000). */
  maxTrackedNames?: number;
};

/** How a started check ended: `no-answer` (the store failed) neither counts nor resets. */
export type LoginOutcome = 'success' | 'failure' | 'no-answer';

export type LoginBackoff = {
  /** Whether a password check for `username` may run now; when true, report its end with `finish`. */
  tryStart(username: string): boolean;
  finish(username: string, outcome: LoginOutcome): void;
  /** User names currently remembered (bounded by maxTrackedNames). */
  trackedNames(): number;
};

type NameState = { failures: number; checking: number; blockedUntil: number };

/**
 * Slows down password guessing per user name. Past `failuresBeforeBackoff` failures in a row, attempts
 * are refused unchecked until a wait (doubling per further failure, capped) has passed, then checked
 * one at a time; a success resets the name. Names are tracked whether or not the user exists, so an
 * unknown user is answered exactly like a wrong password. Checks under way count towards the free
 * failures, so a burst of parallel guesses gets no more checks than a sequence would.
 *
 * @example
 * const backoff = createLoginBackoff(clock);
 * if (backoff.tryStart(name)) backoff.finish(name, (await verify(name, password)) ? 'success' : 'failure');
 */
export function createLoginBackoff(clock: Clock, options: LoginBackoffOptions = {}): LoginBackoff {
  const free = options.failuresBeforeBackoff ?? 5;
  const firstDelay = options.firstDelayMs ?? 1_000;
  const maxDelay = options.maxDelayMs ?? 60_000;
  const maxNames = options.maxTrackedNames ?? 10_000;
  // Names are kept as keyed hashes: a name is at most one header long (16 KB), its hash 44 characters,
  // so the memory bound does not depend on what clients send, and no user name is held in memory.
  const key = randomBytes(32);
  const id = (username: string) => createHmac('sha256', key).update(username).digest('base64');
  // Insertion order is recency: each attempt, allowed or refused, re-inserts its name, so the first key
  // is the least recently tried.
  const names = new Map<string, NameState>();
  const touch = (nameId: string, state: NameState) => {
    names.delete(nameId);
    names.set(nameId, state);
    if (names.size > maxNames) names.delete(names.keys().next().value!);
  };

  return {
    tryStart(username) {
      if (free === 0) return true;
      const nameId = id(username);
      const state = names.get(nameId) ?? { failures: 0, checking: 0, blockedUntil: 0 };
      // Refused attempts count as use too: a name under attack stays tracked while others are forgotten.
      touch(nameId, state);
      if (clock.nowMs() < state.blockedUntil) return false;
      // Past the free failures, one check at a time: a parallel burst must not slip through together.
      if (state.checking > 0 && state.failures + state.checking >= free) return false;
      state.checking++;
      return true;
    },
    finish(username, outcome) {
      if (free === 0) return;
      const nameId = id(username);
      const state = names.get(nameId);
      if (!state) return; // forgotten meanwhile (more names than maxTrackedNames were tried)
      state.checking = Math.max(0, state.checking - 1);
      if (outcome === 'success') {
        state.failures = 0;
        state.blockedUntil = 0;
        if (state.checking === 0) names.delete(nameId);
      } else if (outcome === 'failure') {
        state.failures++;
        if (state.failures >= free) state.blockedUntil = clock.nowMs() + Math.min(maxDelay, firstDelay * 2 ** (state.failures - free));
      }
    },
    trackedNames: () => names.size,
  };
}

// `portolan generate --watch`: regenerates generated/<interface>/ each time specs/<interface>.yaml is saved.
// Saves are debounced per file (an editor's save is often several writes or a rename), handled one at a time,
// and only a spec whose text changed since its contract was compiled is regenerated. A spec that is not valid
// is one error line and generated/ is left as it was; the watch goes on until stopped (Ctrl-C).
import { watch as fsWatch, existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Clock } from '../lib/clock.ts';
import type { Cancel, Timers } from '../lib/timers.ts';
import { readSpecCatalog } from '../lib/spec-catalog.ts';
import { contractPath, specHash } from '../server/compiled-contract.ts';

/** What watches a folder: calls `onChange` with a file name on every change in it; `onError` when watching fails. */
export type FolderWatch = (dir: string, onChange: (file: string) => void, onError: (error: Error) => void) => { close(): void };

/** node:fs.watch on the folder (not on each file: an editor that saves by renaming keeps being seen). */
export const watchFolder: FolderWatch = (dir, onChange, onError) => {
  const watcher = fsWatch(dir, { persistent: true }, (_event, file) => {
    if (file) onChange(String(file));
  });
  watcher.on('error', onError);
  return watcher;
};

export type WatchSpecsOptions = {
  /** The folder of the specs (specs/). */
  specsDir: string;
  /** Where generation writes (generated/); its contracts say which specs are already up to date. */
  generatedDir: string;
  /** Only these interfaces (all when empty). */
  names?: readonly string[];
  /** Regenerates one interface (default in the CLI: generate(generatedDir, [name])). */
  regenerate: (name: string) => Promise<void>;
  /** Rejects, with what is wrong, a spec text that is not a valid OpenAPI document (default: validateSpec). */
  validate?: (text: string) => Promise<void>;
  watch?: FolderWatch;
  timers: Timers;
  clock: Clock;
  /** Quiet time after a file's last change before it is handled (default 200 ms). */
  debounceMs?: number;
  /** One line per regeneration (no newline). */
  print: (line: string) => void;
  /** One line per spec that cannot be generated, or when watching fails (no newline). */
  printError: (line: string) => void;
};

export type SpecWatch = {
  /** Resolves once the specs present at start were checked (and the stale ones regenerated). */
  ready: Promise<void>;
  /** Resolves when watching failed (the folder went away): the line was printed. */
  failed: Promise<void>;
  /** Stops watching; resolves once a regeneration under way has finished (generated/ is never left half-written). */
  stop(): Promise<void>;
};

/**
 * Watches `specsDir`: at start, and after each save, regenerates the interfaces whose spec text differs from the
 * one their compiled contract was made from.
 *
 * @example
 * const watching = watchSpecs({ specsDir, generatedDir, regenerate: (name) => generate(generatedDir, [name]).then(() => {}),
 *   timers: systemTimers, clock: systemClock, print: console.log, printError: console.error });
 * process.once('SIGINT', () => void watching.stop());
 */
export function watchSpecs(options: WatchSpecsOptions): SpecWatch {
  const { specsDir, generatedDir, timers, clock } = options;
  const debounceMs = options.debounceMs ?? 200;
  const validate = options.validate ?? validateSpec;
  const only = new Set(options.names ?? []);
  /** Interfaces seen at start: one that stops being an OpenAPI document is reported, other YAML is not. */
  const known = new Set(readSpecCatalog(specsDir).entries.map((e) => e.name));
  /** Per interface, the hash of the spec text generated/ was last made from (read from its contract at first). */
  const generatedFrom = new Map<string, string | undefined>();
  const waiting = new Map<string, Cancel>();
  const queue: string[] = [];
  let working: Promise<void> | undefined;
  let stopped = false;
  let fail: () => void = () => undefined;
  const failed = new Promise<void>((resolve) => (fail = resolve));

  const lastGenerated = (name: string) => {
    if (!generatedFrom.has(name)) {
      const file = contractPath(name, join(generatedDir, '/'));
      let hash: string | undefined;
      try {
        hash = (JSON.parse(readFileSync(file, 'utf8')) as { sourceSha256?: string }).sourceSha256;
      } catch {
        hash = undefined;
      }
      generatedFrom.set(name, hash);
    }
    return generatedFrom.get(name);
  };

  /** One spec file: skipped when unchanged or not an interface; else checked, then regenerated. */
  async function handle(file: string): Promise<void> {
    const name = file.slice(0, -'.yaml'.length);
    const shown = `specs/${file}`;
    if (only.size > 0 && !only.has(name)) return;
    const path = join(specsDir, file);
    if (!existsSync(path)) {
      if (known.has(name)) options.printError(`${shown} was removed; generated/${name}/ is left as it was.`);
      return;
    }
    const text = readFileSync(path, 'utf8');
    const hash = specHash(text);
    if (hash === lastGenerated(name)) return;
    const catalog = readSpecCatalog(specsDir);
    const problems = catalog.problems.filter((line) => line.includes(shown)).map((line) => line.replace(`${shown}: `, ''));
    if (problems.length > 0) return reject(name, shown, problems.join('; '));
    if (!catalog.entries.some((e) => e.name === name)) {
      if (known.has(name)) reject(name, shown, 'it is no longer an OpenAPI document (no `openapi` field)');
      return;
    }
    const others = catalog.problems.filter((line) => !line.includes(shown));
    if (others.length > 0) return reject(name, shown, `specs/ needs fixing first: ${others.join('; ')}`);
    try {
      await validate(text);
    } catch (error) {
      return reject(name, shown, `not a valid OpenAPI document: ${(error as Error).message}`);
    }
    const started = clock.nowMs();
    try {
      await options.regenerate(name);
    } catch (error) {
      return reject(name, shown, `generation failed: ${firstLine((error as Error).message)}`);
    }
    known.add(name);
    generatedFrom.set(name, hash);
    options.print(`${shown}: regenerated generated/${name}/ (${((clock.nowMs() - started) / 1000).toFixed(1)} s)`);
  }

  /** The error line (saving the same text again reports it again: the save was seen). */
  function reject(name: string, shown: string, what: string): void {
    options.printError(`${shown}: ${what}; generated/${name}/ is unchanged. Fix the spec and save it again.`);
  }

  /** Handles the queued files one after another (two generations never write generated/ at once). */
  async function handleQueued(): Promise<void> {
    while (queue.length > 0 && !stopped) {
      const file = queue.shift()!;
      try {
        await handle(file);
      } catch (error) {
        options.printError(`specs/${file}: ${firstLine((error as Error).message)}`);
      }
    }
  }

  function drain(): Promise<void> {
    working ??= handleQueued().then(() => {
      working = undefined;
      // A file queued after the last look at the queue, before this ran.
      if (queue.length > 0 && !stopped) return drain();
    });
    return working;
  }

  const enqueue = (file: string) => {
    if (!queue.includes(file)) queue.push(file);
    return drain();
  };

  const isSpecFile = (file: string) => file.endsWith('.yaml') && !file.startsWith('.') && basename(file) === file;

  const watcher = (options.watch ?? watchFolder)(
    specsDir,
    (file) => {
      if (stopped || !isSpecFile(file)) return;
      waiting.get(file)?.();
      waiting.set(
        file,
        timers.after(debounceMs, () => {
          waiting.delete(file);
          void enqueue(file);
        }),
      );
    },
    (error) => {
      if (stopped) return;
      options.printError(`Watching ${specsDir} failed: ${firstLine(error.message)}`);
      void stop().then(fail);
    },
  );

  const ready = (async () => {
    const files = readSpecCatalog(specsDir).entries.map((e) => basename(e.path));
    for (const file of files) queue.push(file);
    await drain();
  })();
  // A specs folder that cannot be read at the start ends the watch with one line, never an unhandled rejection.
  ready.catch((error: Error) => {
    options.printError(`Watching ${specsDir} failed: ${firstLine(error.message)}`);
    void stop().then(fail);
  });

  async function stop(): Promise<void> {
    stopped = true;
    watcher.close();
    for (const cancel of waiting.values()) cancel();
    waiting.clear();
    queue.length = 0;
    await working;
  }

  return { ready, failed, stop };
}

/**
 * Rejects a spec text that is not a valid OpenAPI document (YAML, the OpenAPI schema, every `$ref` found),
 * with one line: the first problem, its place written as a path (`paths /charts post ...`).
 *
 * @example
 * await validateSpec('openapi: 3.1.0\ninfo: {title: x, version: "1"}\npaths: 5\n') // rejects: "paths: must be object"
 */
export async function validateSpec(text: string): Promise<void> {
  const [{ parse }, { default: SwaggerParser }] = await Promise.all([import('yaml'), import('@apidevtools/swagger-parser')]);
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    throw new Error(`not YAML: ${firstLine((error as Error).message)}`);
  }
  try {
    await SwaggerParser.validate(document as never);
  } catch (error) {
    throw new Error(readableValidation((error as Error).message));
  }
}

/** swagger-parser's message (`Swagger schema validation failed.\n  #/paths/~1a must be object\n ...`) as one line. */
function readableValidation(message: string): string {
  const details = message
    .split('\n')
    .slice(1)
    .map((line) => line.trim())
    .filter((line) => line.startsWith('#'));
  if (details.length === 0) return firstLine(message);
  const [pointer = '#', ...rest] = details[0]!.split(' ');
  const place = pointer
    .slice(2)
    .split('/')
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .join(' ');
  const more = details.length > 1 ? ` (and ${details.length - 1} more problem${details.length > 2 ? 's' : ''})` : '';
  return `${place === '' ? 'the document' : place}: ${rest.join(' ')}${more}`;
}

const firstLine = (text: string) => text.split('\n')[0]!.trim();

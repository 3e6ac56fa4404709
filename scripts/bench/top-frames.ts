// `node scripts/bench/top-frames.ts <file.cpuprofile> [--top 20] [--skip-ms 0]`: the frames with the most
// self time in a V8 CPU profile (as written by `node --cpu-prof`), as a markdown table for notes: function,
// url:line, self ms, share of the profile. Frames are summed over every call path (same function, url and
// line). --skip-ms leaves out the first milliseconds of the profile (start-up: module loading, compiling
// the validators), so what remains is the process under load.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

type CallFrame = { functionName: string; url: string; lineNumber: number };
type Profile = { nodes: { id: number; callFrame: CallFrame }[]; samples: number[]; timeDeltas: number[] };
type Frame = { name: string; where: string; selfMs: number };

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Self time per frame, largest first. A sample's time is the delta to the next sample. */
export function selfTimes(profile: Profile, skipMs = 0): { frames: Frame[]; totalMs: number } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const frames = new Map<string, Frame>();
  let totalMs = 0;
  let atMs = 0;
  profile.samples.forEach((id, i) => {
    atMs += (profile.timeDeltas[i] ?? 0) / 1000;
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    if (atMs < skipMs) return;
    totalMs += ms;
    const frame = byId.get(id)!;
    const where = frame.url ? `${shorten(frame.url)}:${frame.lineNumber + 1}` : '';
    const name = frame.functionName || '(anonymous)';
    const key = `${name} ${where}`;
    const found = frames.get(key) ?? frames.set(key, { name, where, selfMs: 0 }).get(key)!;
    found.selfMs += ms;
  });
  return { frames: [...frames.values()].sort((a, b) => b.selfMs - a.selfMs), totalMs };
}

/** Project files relative to the repository, node_modules from the package on. */
function shorten(url: string): string {
  if (!url.startsWith('file://')) return url;
  const path = relative(root, fileURLToPath(url));
  const inModules = path.lastIndexOf('node_modules/');
  return inModules >= 0 ? path.slice(inModules) : path;
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '20' }, 'skip-ms': { type: 'string', default: '0' } },
  });
  if (positionals.length !== 1) {
    console.error('Usage: node scripts/bench/top-frames.ts <file.cpuprofile> [--top 20] [--skip-ms 0]');
    process.exit(2);
  }
  const skipMs = Number(values['skip-ms']);
  const { frames, totalMs } = selfTimes(JSON.parse(readFileSync(positionals[0]!, 'utf8')) as Profile, skipMs);
  console.log(`${positionals[0]}: ${(totalMs / 1000).toFixed(2)} s sampled${skipMs > 0 ? ` after the first ${skipMs} ms` : ''}`);
  console.log('| # | function | url:line | self ms | % |');
  console.log('|---:|---|---|---:|---:|');
  frames.slice(0, Number(values.top)).forEach((f, i) => {
    console.log(
      `| ${i + 1} | ${f.name.replaceAll('|', '\\|')} | ${f.where} | ${f.selfMs.toFixed(1)} | ${((100 * f.selfMs) / totalMs).toFixed(1)} |`,
    );
  });
}

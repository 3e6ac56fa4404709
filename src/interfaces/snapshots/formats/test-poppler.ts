// Reads PDFs with poppler's command-line tools (Debian package poppler-utils, installed by
// scripts/system-packages.ts): renders a page to PNG and decodes it, extracts the text and the links.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';

/** Why the PDF cannot be rendered here, or undefined when pdftoppm is there. */
export function popplerMissing(): string | undefined {
  const probe = spawnSync('pdftoppm', ['-v'], { stdio: 'ignore' });
  if (probe.error === undefined) return undefined;
  return (
    `pdftoppm (Debian package poppler-utils) is missing, so the PDF cannot be rendered to PNG: ${probe.error.message}. ` +
    'Run `node scripts/system-packages.ts` (npm test does) or, as root, `apt-get install -y poppler-utils`.'
  );
}

/** Runs one poppler tool on `pdf` written to a temporary file (`args` gets its path and the folder); its standard output, or the PNG it wrote. */
function poppler(tool: string, args: (file: string, dir: string) => string[], pdf: Buffer): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'portolan-pdf-'));
  try {
    writeFileSync(join(dir, 'report.pdf'), pdf);
    const run = spawnSync(tool, args(join(dir, 'report.pdf'), dir), { maxBuffer: 64 << 20 });
    if (run.error || run.status !== 0) throw new Error(`${tool} failed: ${run.error?.message ?? run.stderr.toString()}`);
    return tool === 'pdftoppm' ? readFileSync(join(dir, 'page.png')) : run.stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Page `page` (1-based) rendered at `dpi`, decoded. */
export const renderPage = (pdf: Buffer, page: number, dpi = 50): PNG =>
  PNG.sync.read(
    poppler(
      'pdftoppm',
      (file, dir) => ['-png', '-singlefile', '-r', String(dpi), '-f', String(page), '-l', String(page), file, join(dir, 'page')],
      pdf,
    ),
  );

/** The share of pixels that are not (nearly) white: 0 for a blank page. */
export function inkRatio(png: PNG): number {
  let ink = 0;
  for (let i = 0; i < png.data.length; i += 4) {
    const [r, g, b, a] = [png.data[i]!, png.data[i + 1]!, png.data[i + 2]!, png.data[i + 3]!];
    if (a > 0 && Math.min(r, g, b) < 235) ink++;
  }
  return ink / (png.width * png.height);
}

/** The text of each page, in reading order. */
export function textPages(pdf: Buffer): string[] {
  const pages = poppler('pdftotext', (file) => ['-layout', '-enc', 'UTF-8', file, '-'], pdf)
    .toString('utf8')
    .split('\f');
  if (pages.at(-1)?.trim() === '') pages.pop();
  return pages;
}

/** The page count and the URL of every link annotation, with its page (from pdfinfo). */
export function pdfInfo(pdf: Buffer): { pages: number; links: { page: number; url: string }[] } {
  const info = poppler('pdfinfo', (file) => [file], pdf).toString('utf8');
  const links = poppler('pdfinfo', (file) => ['-url', file], pdf)
    .toString('utf8')
    .split('\n')
    .slice(1)
    .map((line) => /^\s*(\d+)\s+Annotation\s+(\S+)/.exec(line))
    .filter((m) => m !== null)
    .map((m) => ({ page: Number(m[1]), url: m[2]! }));
  return { pages: Number(/^Pages:\s+(\d+)/m.exec(info)?.[1] ?? 0), links };
}

// The versioning rule: a breaking change needs a major `info.version` bump over the version compared with.
import { formatChange, type Change } from './change.ts';

export type SpecVerdict = {
  spec: string;
  version: { before: string; after: string };
  breaking: Change[];
  nonBreaking: Change[];
  /** Set when breaking changes lack a major bump: the version to bump to. */
  requiredVersion?: string;
};

const major = (version: string) => {
  const m = /^v?(\d+)\./.exec(version.trim());
  return m ? Number(m[1]) : undefined;
};

/** Splits the changes of one spec and decides whether its version says enough. */
export function judge(spec: string, version: { before: string; after: string }, changes: Change[]): SpecVerdict {
  const breaking = changes.filter((c) => c.breaking);
  const nonBreaking = changes.filter((c) => !c.breaking);
  const [from, to] = [major(version.before), major(version.after)];
  const bumped = from !== undefined && to !== undefined && to > from;
  const verdict: SpecVerdict = { spec, version, breaking, nonBreaking };
  if (breaking.length > 0 && !bumped) verdict.requiredVersion = `${(from ?? 0) + 1}.0.0`;
  return verdict;
}

/** The failure text of one verdict: one headline, then one line per breaking change. */
export function describeFailure(v: SpecVerdict): string[] {
  if (!v.requiredVersion) return [];
  return [
    `specs/${v.spec}.yaml: ${v.breaking.length} breaking change(s) (${[...new Set(v.breaking.map((c) => c.kind))].join(', ')}) without a major version bump (info.version ${v.version.after}): bump info.version to ${v.requiredVersion}`,
    ...v.breaking.map((c) => `  ${formatChange(c)}`),
  ];
}

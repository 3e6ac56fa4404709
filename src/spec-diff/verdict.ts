// The versioning rule: a breaking change needs a major `info.version` bump over the version compared with.
import { type Change, formatChange } from './change.ts';

export type SpecVerdict = {
  /** The spec's name (`mapping` for specs/mapping.yaml); undefined when two files were compared. */
  spec?: string;
  /** How the output names it: `specs/mapping.yaml`, or the newer file's path. */
  file: string;
  version: { before: string; after: string };
  /** Every change reported (checks set to `off` left out), each at its severity in effect. */
  changes: Change[];
  /** Set when breaking changes lack a major bump: the version to bump to. */
  requiredVersion?: string;
};

const major = (version: string) => {
  const m = /^v?(\d+)\./.exec(version.trim());
  return m ? Number(m[1]) : undefined;
};

/**
 * Decides whether the version of one spec says enough for its changes.
 * @example judge({ spec: 'mapping', file: 'specs/mapping.yaml' }, { before: '1.0.0', after: '1.1.0' }, changes)
 */
export function judge(name: { spec?: string; file: string }, version: { before: string; after: string }, changes: Change[]): SpecVerdict {
  const [from, to] = [major(version.before), major(version.after)];
  const bumped = from !== undefined && to !== undefined && to > from;
  const verdict: SpecVerdict = { ...(name.spec !== undefined ? { spec: name.spec } : {}), file: name.file, version, changes };
  if (changes.some((c) => c.severity === 'breaking') && !bumped) verdict.requiredVersion = `${(from ?? 0) + 1}.0.0`;
  return verdict;
}

/**
 * The failure text of one verdict: one headline (the ids of its breaking changes and the version to bump
 * to), then one line per breaking change; nothing when the verdict passes.
 * @example describeFailure(verdict)[0] // 'specs/mapping.yaml: 1 breaking change (request-field-removed) without a major version bump ...'
 */
export function describeFailure(v: SpecVerdict): string[] {
  if (!v.requiredVersion) return [];
  const breaking = v.changes.filter((c) => c.severity === 'breaking');
  const count = `${breaking.length} breaking change${breaking.length === 1 ? '' : 's'}`;
  return [
    `${v.file}: ${count} (${[...new Set(breaking.map((c) => c.id))].join(', ')}) without a major version bump (info.version ${v.version.after}): bump info.version to ${v.requiredVersion}`,
    ...breaking.map((c) => `  ${formatChange(c)}`),
  ];
}

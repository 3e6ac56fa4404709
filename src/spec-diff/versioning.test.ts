// The versioning rule in npm test: every spec in the working tree, compared with the spec at its release
// floor (specs/releases.yaml), has no breaking change unless its info.version has a new major.
import t from 'tap';
import { fileURLToPath } from 'node:url';
import { INTERFACES } from '../lib/spec-catalog.ts';
import { compareWithCommit } from './compare.ts';
import { readAtCommit, repositoryRoot, resolveCommit } from './git.ts';
import { readReleaseFloors } from './releases.ts';
import { describeFailure } from './verdict.ts';
import { parse } from 'yaml';

const RELEASES = fileURLToPath(new URL('../../specs/releases.yaml', import.meta.url));
const root = await repositoryRoot(fileURLToPath(new URL('.', import.meta.url)));
const floors = readReleaseFloors(RELEASES);

t.test('every spec has a release floor', async (t) => {
  t.same(
    INTERFACES.map((i) => i.name).filter((n) => !floors.has(n)),
    [],
    'specs without an entry in specs/releases.yaml',
  );
});

for (const [spec, floor] of floors) {
  t.test(`specs/${spec}.yaml has no breaking change since its release ${floor.version} without a major bump`, async (t) => {
    const commit = await resolveCommit(root, floor.commit);
    if (!commit) {
      t.fail(
        `specs/releases.yaml: commit ${floor.commit} (release floor of ${spec}) is not in this clone: fetch the history (git fetch --unshallow)`,
      );
      return;
    }
    const released = parse((await readAtCommit(root, commit, `specs/${spec}.yaml`)) ?? '') as { info?: { version?: string } } | null;
    t.equal(
      released?.info?.version,
      floor.version,
      `specs/releases.yaml: ${spec} at ${floor.commit.slice(0, 12)} has info.version ${floor.version}`,
    );
    const [verdict] = await compareWithCommit(root, commit, [spec]);
    t.same(verdict ? describeFailure(verdict) : [], [], 'no breaking change without a major version bump');
  });
}

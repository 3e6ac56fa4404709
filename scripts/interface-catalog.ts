// What adding (or removing) an interface must keep in step, beyond its spec, its module folder and its line
// in src/app/modules.ts: the generated catalog, the package's SDK entries and the release floors. Each gap
// is one line saying what to add or remove where (scripts/interface-catalog.test.ts runs it on the tree).

/** The facts compared: names of the specs on disk and of the generated catalog, the modules, exports, floors. */
export type CatalogFacts = {
  /** The OpenAPI documents of specs/ (readSpecCatalog), with their info.version. */
  specs: readonly { name: string; version: string }[];
  /** generated/interfaces.gen.ts (INTERFACES). */
  generated: readonly string[];
  /** src/app/modules.ts (MODULES), by `name`. */
  modules: readonly string[];
  /** package.json `exports` keys and targets. */
  exports: Readonly<Record<string, unknown>>;
  /** specs/releases.yaml, by spec name. */
  floors: readonly string[];
};

/** The two package entries of an interface's SDK, exactly as package.json has them. */
export function sdkExports(name: string): Record<string, { types: string; 'portolan-source': string; default: string }> {
  const entry = (path: string) => ({
    types: `./dist/generated/${path}.d.ts`,
    'portolan-source': `./generated/${path}.ts`,
    default: `./dist/generated/${path}.js`,
  });
  return { [`./sdk/${name}`]: entry(`${name}/index`), [`./sdk/${name}/client`]: entry(`${name}/client/index`) };
}

const missing = (from: readonly string[], among: readonly string[]) => from.filter((n) => !among.includes(n));

/** Every gap between the specs and the lists that must follow them; [] when all agree. */
export function catalogGaps(facts: CatalogFacts): string[] {
  const names = facts.specs.map((s) => s.name);
  const gaps: string[] = [];
  for (const name of missing(names, facts.generated))
    gaps.push(`generated/interfaces.gen.ts lacks '${name}' (specs/${name}.yaml): run \`npm run generate\``);
  for (const name of missing(facts.generated, names))
    gaps.push(`generated/interfaces.gen.ts lists '${name}', which has no spec in specs/ any more: run \`npm run generate\``);
  for (const name of missing(names, facts.modules))
    gaps.push(
      `src/app/modules.ts: add the module of '${name}' to MODULES (src/interfaces/${name}/module.ts: defineModule({ name: '${name}', ... }))`,
    );
  for (const name of missing(facts.modules, names))
    gaps.push(`src/app/modules.ts: MODULES has '${name}', which has no spec: add specs/${name}.yaml, or remove the module`);
  for (const name of names) {
    for (const [key, target] of Object.entries(sdkExports(name))) {
      if (JSON.stringify(facts.exports[key]) !== JSON.stringify(target))
        gaps.push(`package.json exports: add (or correct) "${key}": ${JSON.stringify(target)}`);
    }
  }
  const sdkKeys = names.flatMap((n) => Object.keys(sdkExports(n)));
  for (const key of Object.keys(facts.exports).filter((k) => k.startsWith('./sdk/') && !sdkKeys.includes(k)))
    gaps.push(`package.json exports: remove "${key}" (no spec in specs/ has that name)`);
  for (const { name, version } of facts.specs.filter((s) => !facts.floors.includes(s.name)))
    gaps.push(
      `specs/releases.yaml: add under specs: "${name}: { version: '${version}', commit: <the commit that releases specs/${name}.yaml at ${version}> }"`,
    );
  for (const name of missing(facts.floors, names))
    gaps.push(`specs/releases.yaml: remove the floor of '${name}' (no spec in specs/ has that name)`);
  return gaps;
}

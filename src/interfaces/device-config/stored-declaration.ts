import { objectText } from './declaration/json-text.ts';
import type { SavedDeclaration } from './declaration-store.ts';

/**
 * The saved declaration as the standby device answers it (it runs nothing: what it shows is what the active
 * one saved, `persist: true`), restricted to `names` when given; undefined when no tenant is saved. Put
 * together as text (the header's members and the tenants' texts), never parsed.
 */
export function storedDeclarationText(saved: SavedDeclaration, schemaCurrent: string, names?: ReadonlySet<string>): string | undefined {
  const chosen = saved.tenants.filter(([name]) => !names || names.has(name));
  if (!names && chosen.length === 0) return undefined;
  const header =
    saved.header && saved.header.length > 2
      ? saved.header.slice(1, -1)
      : objectText([
          ['class', '"ADC"'],
          ['schemaVersion', JSON.stringify(schemaCurrent)],
        ]).slice(1, -1);
  const tenants = objectText(chosen).slice(1, -1);
  return `{${[header, tenants].filter((part) => part !== '').join(',')}}`;
}

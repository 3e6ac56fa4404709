// The compiled form of a rule set (rules/rules.json, described in README.md "Rule language"):
// what parseRuleSet produces once, frozen, and the evaluator reads. Regular expressions, globs and
// address ranges are compiled at load time, so a rule file is refused whole before it is used.
import type { BlockList } from 'node:net';
import type { CollectionName } from './facts.ts';
import type { Glob } from './glob.ts';

export const IMPORTANCES = ['low', 'medium', 'high', 'critical'] as const;
export type Importance = (typeof IMPORTANCES)[number];

export type Scalar = string | number | boolean;
/** Another field of the same item (`{"field": "timeout"}`), only inside `each ... where`. */
export type FieldRef = { readonly field: string };

export type Comparison =
  | { readonly op: 'eq' | 'ne'; readonly value: Scalar | FieldRef }
  | { readonly op: 'gt' | 'gte' | 'lt' | 'lte'; readonly value: number | FieldRef }
  | { readonly op: 'in'; readonly values: readonly Scalar[] }
  | { readonly op: 'matches'; readonly regex: RegExp }
  | { readonly op: 'inCidr'; readonly ranges: BlockList; readonly text: string };

/** Every comparison must hold. */
export type Test = readonly Comparison[];

export type Predicate =
  | { readonly kind: 'field'; readonly field: string; readonly test: Test }
  | { readonly kind: 'all' | 'any'; readonly of: readonly Predicate[] }
  | { readonly kind: 'not'; readonly of: Predicate };

export type Condition =
  | { readonly kind: 'all' | 'any'; readonly of: readonly Condition[] }
  | { readonly kind: 'not'; readonly of: Condition }
  | { readonly kind: 'version'; readonly from?: readonly number[]; readonly before?: readonly number[]; readonly text: string }
  | { readonly kind: 'pattern'; readonly files: Glob; readonly regex: RegExp; readonly atLeast: number }
  | { readonly kind: 'present' | 'missing'; readonly files: Glob }
  | { readonly kind: 'json'; readonly file: string; readonly key: readonly string[]; readonly test: Test }
  | {
      readonly kind: 'extract';
      readonly files: Glob;
      readonly regex: RegExp;
      readonly value: string;
      readonly percentOf?: string;
      readonly label?: string;
      readonly as: 'number' | 'days-after-snapshot';
      readonly test: Test;
    }
  | { readonly kind: 'each'; readonly collection: CollectionName; readonly where?: Predicate; readonly atLeast: number };

export type Rule = {
  readonly name: string;
  readonly importance: Importance;
  readonly header: string;
  readonly summary: string;
  readonly action: string;
  readonly solutions: readonly string[];
  readonly cves: readonly string[];
  readonly match: Condition;
};

export type RuleSet = {
  readonly version: string;
  readonly rules: readonly Rule[];
  /** Whether any rule reads this file (by pattern, extraction, JSON key or collection): the files to load. */
  readonly reads: (path: string) => boolean;
  /** The rule file as decoded JSON: what a processing worker thread compiles again (compiled rules do not cross threads). */
  readonly source: unknown;
};

export type FactValue = string | number | boolean | readonly string[];

/** One item of a collection (facts.ts): an id that output lines name it by, and its fields. */
export type Fact = { readonly id: string; readonly fields: Readonly<Record<string, FactValue>> };

import type { Readable } from 'node:stream';

/** The body is longer than the limit (declared or counted). */
export class BodyTooLarge extends Error {
  readonly limit: number;
  constructor(limit: number) {
    super(`request body over ${limit} bytes`);
    this.limit = limit;
  }
}

/**
 * Reads a whole request body, refusing (BodyTooLarge) past `limit` bytes, counted as they arrive;
 * undefined for an empty body. The declared length was checked before (body-policy.ts). What is left
 * unread after a refusal is the adapter's to drop (it closes the connection).
 */
export async function readBody(stream: Readable | undefined, limit: number): Promise<Buffer | undefined> {
  if (!stream) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += bytes.length;
    if (size > limit) throw new BodyTooLarge(limit);
    chunks.push(bytes);
  }
  if (chunks.length === 0) return undefined;
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
}

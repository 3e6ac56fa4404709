import { open } from 'node:fs/promises';

/** The first `max` bytes of a file (all of it when it is shorter), read without taking the rest. */
export async function readHead(path: string, max: number): Promise<Buffer> {
  await using file = await open(path, 'r');
  const buffer = Buffer.alloc(Math.min(max, (await file.stat()).size));
  const { bytesRead } = await file.read(buffer, 0, buffer.length, 0);
  return buffer.subarray(0, bytesRead);
}

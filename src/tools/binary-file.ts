import { open } from 'node:fs/promises';

/** Bytes looked at to decide whether a file is binary, as git and grep do. */
export const BINARY_SNIFF_BYTES = 8192;

/** A NUL byte in the first 8 KB means binary: text files practically never hold one. */
export function looksBinary(bytes: Buffer): boolean {
  return bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0);
}

/** Reads only the first 8 KB of a file to tell whether it is binary. */
export async function isBinaryFile(file: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(BINARY_SNIFF_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, BINARY_SNIFF_BYTES, 0);
    return looksBinary(buffer.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}

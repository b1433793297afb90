// Tool and command output is capped before it reaches the model: a flood of output
// costs tokens and hides the interesting parts, which are usually at the start (the
// command, the first error) and at the end (the summary, the exit status). So we keep
// the first half and the last half of the cap and say, in the text, how much was cut.

/** The line that stands in for the bytes left out between head and tail. */
export function cutMarker(cutBytes: number): string {
  return `\n[... ${cutBytes} bytes cut ...]\n`;
}

/**
 * Collects a stream of bytes keeping only the first and the last `capBytes / 2`.
 * Memory stays at about `capBytes` however much is pushed: the tail is a ring buffer.
 */
export class CappedOutput {
  readonly #headCap: number;
  readonly #tailCap: number;
  readonly #head: Buffer[] = [];
  #headLength = 0;
  /** Allocated on first use, so a quiet command costs nothing. */
  #ring: Buffer | undefined;
  #ringStart = 0;
  #ringLength = 0;
  #total = 0;

  constructor(capBytes: number) {
    const cap = Math.max(0, Math.floor(capBytes));
    this.#headCap = Math.floor(cap / 2);
    this.#tailCap = cap - this.#headCap;
  }

  /** Bytes pushed so far, kept or not. */
  get totalBytes(): number {
    return this.#total;
  }

  /** Bytes pushed but neither in the head nor in the tail. */
  get cutBytes(): number {
    return this.#total - this.#headLength - this.#ringLength;
  }

  push(chunk: Buffer): void {
    this.#total += chunk.length;
    let rest = chunk;
    if (this.#headLength < this.#headCap) {
      const take = Math.min(this.#headCap - this.#headLength, rest.length);
      // Copy: the caller may reuse its buffer, and a small slice must not pin a big one.
      this.#head.push(Buffer.from(rest.subarray(0, take)));
      this.#headLength += take;
      rest = rest.subarray(take);
    }
    if (rest.length > 0 && this.#tailCap > 0) this.#pushTail(rest);
  }

  /** Head, the cut marker when something was cut, and tail, decoded as lenient UTF-8. */
  text(): string {
    const head = Buffer.concat(this.#head, this.#headLength);
    const tail = this.#tailBytes();
    const cut = this.cutBytes;
    if (cut === 0) return Buffer.concat([head, tail]).toString('utf8');
    // The cut may fall inside a multi-byte character; drop its pieces rather than
    // render replacement characters, and count them as cut.
    const keptHead = withoutTrailingPartialToken(withoutTrailingPartialChar(head));
    const keptTail = withoutLeadingPartialToken(withoutLeadingContinuationBytes(tail));
    const dropped = head.length - keptHead.length + (tail.length - keptTail.length);
    return keptHead.toString('utf8') + cutMarker(cut + dropped) + keptTail.toString('utf8');
  }

  #pushTail(bytes: Buffer): void {
    const cap = this.#tailCap;
    const ring = (this.#ring ??= Buffer.allocUnsafe(cap));
    if (bytes.length >= cap) {
      bytes.copy(ring, 0, bytes.length - cap);
      this.#ringStart = 0;
      this.#ringLength = cap;
      return;
    }
    const writeAt = (this.#ringStart + this.#ringLength) % cap;
    const first = Math.min(bytes.length, cap - writeAt);
    bytes.copy(ring, writeAt, 0, first);
    if (first < bytes.length) bytes.copy(ring, 0, first);
    const length = this.#ringLength + bytes.length;
    if (length > cap) {
      this.#ringStart = (this.#ringStart + length - cap) % cap;
      this.#ringLength = cap;
    } else {
      this.#ringLength = length;
    }
  }

  #tailBytes(): Buffer {
    const ring = this.#ring;
    if (!ring) return Buffer.alloc(0);
    // The start only moves once the ring is full, so a start of 0 means one piece.
    if (this.#ringStart === 0) return ring.subarray(0, this.#ringLength);
    return Buffer.concat([ring.subarray(this.#ringStart), ring.subarray(0, this.#ringStart)]);
  }
}

/** Caps a string that is already in memory, the same way CappedOutput caps a stream. */
export function capText(text: string, capBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= capBytes) return text;
  const capped = new CappedOutput(capBytes);
  capped.push(bytes);
  return capped.text();
}

// A cut inside a word leaves its two ends on either side of the marker: when that word
// is a secret (a token, a key), neither end can be found by the redaction that runs
// later, and half a key is still a leak. So the cut moves out to the nearest whitespace
// on each side, when there is one within a secret's length.
const TOKEN_WINDOW = 512;

function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x09 || byte === 0x0d;
}

function withoutTrailingPartialToken(bytes: Buffer): Buffer {
  const stop = Math.max(0, bytes.length - TOKEN_WINDOW);
  for (let i = bytes.length - 1; i >= stop; i--) if (isSpace(bytes[i]!)) return bytes.subarray(0, i + 1);
  return bytes;
}

function withoutLeadingPartialToken(bytes: Buffer): Buffer {
  const stop = Math.min(bytes.length, TOKEN_WINDOW);
  for (let i = 0; i < stop; i++) if (isSpace(bytes[i]!)) return bytes.subarray(i);
  return bytes;
}

function withoutTrailingPartialChar(bytes: Buffer): Buffer {
  let start = bytes.length - 1;
  let continuation = 0;
  while (start >= 0 && continuation < 3 && isContinuationByte(bytes[start]!)) {
    start--;
    continuation++;
  }
  if (start < 0) return bytes;
  const needed = sequenceLength(bytes[start]!);
  return bytes.length - start < needed ? bytes.subarray(0, start) : bytes;
}

function withoutLeadingContinuationBytes(bytes: Buffer): Buffer {
  let start = 0;
  while (start < 3 && start < bytes.length && isContinuationByte(bytes[start]!)) start++;
  return bytes.subarray(start);
}

function isContinuationByte(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}

function sequenceLength(leadByte: number): number {
  if (leadByte >= 0xf0) return 4;
  if (leadByte >= 0xe0) return 3;
  if (leadByte >= 0xc0) return 2;
  return 1;
}

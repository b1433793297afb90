import { describe, expect, test } from 'vitest';
import { CappedOutput, capText, cutMarker } from '../../src/text/output-cap.js';

describe('CappedOutput', () => {
  test('keeps everything under the cap, without a marker', () => {
    const out = new CappedOutput(100);
    out.push(Buffer.from('hello '));
    out.push(Buffer.from('world'));
    expect(out.text()).toBe('hello world');
    expect(out.totalBytes).toBe(11);
    expect(out.cutBytes).toBe(0);
  });

  test('keeps head and tail across many small chunks and says what was cut', () => {
    const out = new CappedOutput(10);
    const input = 'abcdefghijklmnopqrstuvwxyz';
    for (const char of input) out.push(Buffer.from(char));
    expect(out.totalBytes).toBe(26);
    expect(out.cutBytes).toBe(16);
    expect(out.text()).toBe(`abcde${cutMarker(16)}vwxyz`);
  });

  test('a chunk larger than the tail replaces the tail', () => {
    const out = new CappedOutput(10);
    out.push(Buffer.from('0123'));
    out.push(Buffer.from('456789abcdefghij'));
    out.push(Buffer.from('kl'));
    expect(out.text()).toBe(`01234${cutMarker(12)}hijkl`);
  });

  test('drops characters split by the cut instead of rendering garbage', () => {
    const out = new CappedOutput(6);
    // Each "é" is 2 bytes: the head's third byte and the tail's first are half of one.
    out.push(Buffer.from('ééééééé'));
    const text = out.text();
    expect(text).not.toContain('\uFFFD');
    expect(text).toBe(`é${cutMarker(10)}é`);
  });

  test('moves the cut out of a word, so no piece of a secret cut in two is kept', () => {
    const key = `sk-ant-api03-${'Q'.repeat(40)}`;
    const out = new CappedOutput(30);
    // Head and tail (15 bytes each) both end inside the key.
    out.push(Buffer.from(`log: ${key} done`));
    expect(out.text()).toBe(`log: ${cutMarker(key.length)} done`);
  });

  test('decodes invalid UTF-8 leniently', () => {
    const out = new CappedOutput(100);
    out.push(Buffer.from([0x61, 0xff, 0x62]));
    expect(out.text()).toBe('a\uFFFDb');
  });

  test('memory stays bounded: the text of a huge stream is about the cap', () => {
    const out = new CappedOutput(1000);
    const chunk = Buffer.alloc(65_536, 'x');
    for (let i = 0; i < 1000; i++) out.push(chunk);
    expect(out.totalBytes).toBe(65_536_000);
    expect(out.text().length).toBeLessThan(1100);
  });

  test('a zero cap keeps nothing but the marker', () => {
    const out = new CappedOutput(0);
    out.push(Buffer.from('abc'));
    expect(out.text()).toBe(cutMarker(3));
  });
});

describe('capText', () => {
  test('returns short text unchanged', () => {
    expect(capText('short', 100)).toBe('short');
  });

  test('cuts long text in the middle with the marker', () => {
    const text = `${'a'.repeat(50)}${'b'.repeat(100)}${'c'.repeat(50)}`;
    expect(capText(text, 100)).toBe(`${'a'.repeat(50)}${cutMarker(100)}${'c'.repeat(50)}`);
  });
});

describe('cutMarker', () => {
  // V8 keeps a string with any character above U+00FF at two bytes a character: one
  // non-ASCII marker doubled the memory of every capped output a run's conversation holds.
  test('is ASCII, so capped ASCII output stays one byte a character', () => {
    expect(cutMarker(123_456)).toMatch(/^[\x20-\x7e\n]+$/);
    expect(cutMarker(123_456)).toContain('123456 bytes cut');
  });
});

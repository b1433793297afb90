import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { LAYERS, NEVER, SRC, sourceFiles } from './layers.js';


interface Import {
  from: string;
  to: string;
}

function moduleOf(file: string): string {
  const [first, ...rest] = path.relative(SRC, file).split(path.sep);
  return rest.length === 0 ? first!.replace(/\.ts$/, '') : first!;
}

/** Every relative import of src/, static, dynamic and type-only, as TypeScript itself reads it. */
function srcImports(): Import[] {
  return sourceFiles(SRC).flatMap((file) => {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    return info.importedFiles
      .filter((ref) => ref.fileName.startsWith('.'))
      .map((ref) => ({ from: path.relative(SRC, file), to: path.relative(SRC, path.resolve(path.dirname(file), ref.fileName)).replace(/\.js$/, '.ts') }));
  });
}

const layerOf = (module: string): number => LAYERS.findIndex((layer) => layer.includes(module));

describe('import boundaries', () => {
  const imports = srcImports();

  it('reads the imports it judges', () => {
    // A parser that found nothing would pass every rule below.
    expect(imports.length).toBeGreaterThan(300);
    expect(imports).toContainEqual({ from: 'cli/main.ts', to: 'errors.ts' });
  });

  it('places every module of src/ in a layer', () => {
    const modules = new Set(sourceFiles(SRC).map(moduleOf));
    expect([...modules].filter((module) => layerOf(module) === -1)).toEqual([]);
  });

  it('has no import that points up or sideways', () => {
    const wrong = imports
      .filter(({ from, to }) => {
        const a = moduleOf(path.join(SRC, from));
        const b = moduleOf(path.join(SRC, to));
        return a !== b && layerOf(b) <= layerOf(a);
      })
      .map(({ from, to }) => `${from} -> ${to}`);
    expect(wrong).toEqual([]);
  });

  it('keeps the guard free of the ticket and config loaders', () => {
    const wrong = imports
      .filter(({ from, to }) => (NEVER[moduleOf(path.join(SRC, from))] ?? []).includes(moduleOf(path.join(SRC, to))))
      .map(({ from, to }) => `${from} -> ${to}`);
    expect(wrong).toEqual([]);
  });

  it('has no two modules that import each other', () => {
    const edges = new Set(imports.map(({ from, to }) => `${moduleOf(path.join(SRC, from))} ${moduleOf(path.join(SRC, to))}`));
    const mutual = [...edges].filter((edge) => {
      const [a, b] = edge.split(' ');
      return a !== b && edges.has(`${b} ${a}`);
    });
    expect(mutual).toEqual([]);
  });
});

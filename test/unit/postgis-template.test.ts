import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { copyTemplate, templateDataDir } from '#infra/local/postgis-template.ts';

// The embedded PostGIS's template data dir (ADR 0155): built once per content, renamed into place
// whole, copied into each new data dir. The build here writes files instead of running PGlite.

let root: string;
const before = process.env.GEOPLANE_POSTGIS_TEMPLATE_DIR;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'geoplane-template-test-'));
  process.env.GEOPLANE_POSTGIS_TEMPLATE_DIR = root;
});
afterEach(() => {
  if (before === undefined) delete process.env.GEOPLANE_POSTGIS_TEMPLATE_DIR;
  else process.env.GEOPLANE_POSTGIS_TEMPLATE_DIR = before;
  rmSync(root, { recursive: true, force: true });
});

const content = { seed: 'CREATE TABLE places ();', seedVersion: 1 };
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A build that writes a data dir of two files (slowly, so two builds overlap), counting its calls. */
function fakeBuild(calls: string[], ms = 50) {
  return async (dir: string) => {
    calls.push(dir);
    mkdirSync(join(dir, 'base'), { recursive: true });
    writeFileSync(join(dir, 'PG_VERSION'), '17\n');
    await wait(ms);
    writeFileSync(join(dir, 'base', 'data'), `built in ${dir}`);
  };
}

describe("the embedded PostGIS's template data dir", () => {
  it('is built once, then found: the second caller copies it without building', async () => {
    const calls: string[] = [];
    const first = await templateDataDir(content, fakeBuild(calls), () => {});
    const second = await templateDataDir(content, fakeBuild(calls), () => {});
    expect(second).toBe(first);
    expect(calls).toHaveLength(1);
    expect(readdirSync(root)).toEqual([first.split('/').at(-1)]);
    const target = join(mkdtempSync(join(tmpdir(), 'geoplane-template-copy-')), 'postgis');
    try {
      copyTemplate(first, target);
      expect(readFileSync(join(target, 'PG_VERSION'), 'utf8')).toBe('17\n');
      expect(readFileSync(join(target, 'base', 'data'), 'utf8')).toBe(`built in ${calls[0]}`);
    } finally {
      rmSync(join(target, '..'), { recursive: true, force: true });
    }
  });

  it('is another template when PGlite would open another seed', async () => {
    const calls: string[] = [];
    const a = await templateDataDir(content, fakeBuild(calls), () => {});
    const b = await templateDataDir(
      { ...content, seed: `${content.seed} -- changed` },
      fakeBuild(calls),
      () => {},
    );
    const c = await templateDataDir({ ...content, seedVersion: 2 }, fakeBuild(calls), () => {});
    expect(new Set([a, b, c]).size).toBe(3);
    expect(calls).toHaveLength(3);
  });

  it('ends whole when two processes build it at once: both get the same complete template, no build dir is left', async () => {
    const calls: string[] = [];
    const [a, b] = await Promise.all([
      templateDataDir(content, fakeBuild(calls, 100), () => {}),
      templateDataDir(content, fakeBuild(calls, 100), () => {}),
    ]);
    expect(calls).toHaveLength(2);
    expect(a).toBe(b);
    expect(readFileSync(join(a, 'base', 'data'), 'utf8')).toMatch(/^built in /);
    expect(readdirSync(root)).toEqual([a.split('/').at(-1)]);
  });

  it('leaves nothing behind when its build fails, and builds again next time', async () => {
    const calls: string[] = [];
    const failing = async (dir: string) => {
      await fakeBuild(calls, 0)(dir);
      throw new Error('initdb failed');
    };
    await expect(templateDataDir(content, failing, () => {})).rejects.toThrow('initdb failed');
    expect(readdirSync(root)).toEqual([]);
    const path = await templateDataDir(content, fakeBuild(calls), () => {});
    expect(existsSync(join(path, 'base', 'data'))).toBe(true);
    expect(calls).toHaveLength(2);
  });

  it("removes the build dirs of processes that ended without finishing them, and leaves a running one's", async () => {
    const ended = spawnSync(process.execPath, ['-e', '']).pid;
    expect(ended).toBeGreaterThan(0);
    const abandoned = `template-0123456789abcdef.building-${ended}-0badc0de`;
    const running = `template-0123456789abcdef.building-${process.pid}-0badc0de`;
    for (const name of [abandoned, running]) {
      mkdirSync(join(root, name, 'base'), { recursive: true });
      writeFileSync(join(root, name, 'base', 'data'), 'half of a build');
    }
    const path = await templateDataDir(content, fakeBuild([]), () => {});
    expect(readdirSync(root).sort()).toEqual([path.split('/').at(-1), running].sort());
    // Found the next time, the template's caller sweeps too.
    writeFileSync(join(root, 'not-a-build'), '');
    mkdirSync(join(root, abandoned));
    await templateDataDir(content, fakeBuild([]), () => {});
    expect(readdirSync(root).sort()).toEqual([path.split('/').at(-1), 'not-a-build', running].sort());
  });

  it('never copies over a data dir that exists', async () => {
    const path = await templateDataDir(content, fakeBuild([]), () => {});
    const target = mkdtempSync(join(tmpdir(), 'geoplane-template-copy-'));
    try {
      writeFileSync(join(target, 'PG_VERSION'), 'mine');
      expect(() => copyTemplate(path, target)).toThrow();
      expect(readFileSync(join(target, 'PG_VERSION'), 'utf8')).toBe('mine');
    } finally {
      rmSync(target, { recursive: true, force: true });
    }
  });
});

/**
 * Model-based test (security checklist item 30): fast-check runs random sequences of adds, mkdirs, renames, moves,
 * deletes, locks with unlocks and re-opens against a real vault, and predicts each outcome with an in-memory model.
 * After every command each folder's listing must match the model; now and then, and at the end, everything is
 * restored and compared byte for byte, and verify (reading all data) must find nothing; nothing may be left behind.
 *
 * Runs: COFFER_MODEL_RUNS (default {@link DEFAULT_RUNS}). A failure prints fast-check's seed and path; set
 * COFFER_MODEL_SEED and COFFER_MODEL_PATH to them to replay it.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { fc } from '@fast-check/vitest';
import { expect, it } from 'vitest';

import { AlreadyExistsError, InvalidArgumentError, Vault, type OnExisting } from '../../src/core/index.js';
import { nativeSodium } from '../helpers/backends.js';
import { leftBehind, newVault, passphrase, writeTree } from '../helpers/vault.js';

const DEFAULT_RUNS = 40;
const MAX_COMMANDS = 30;
const ASKED_RUNS = Number(process.env.COFFER_MODEL_RUNS);
const RUNS = Number.isInteger(ASKED_RUNS) && ASKED_RUNS > 0 ? ASKED_RUNS : DEFAULT_RUNS;
const CHUNK = 64 * 1024;
/** Files above this go to blob files of their own rather than packs (FORMAT.md 8.4). */
const PACK_LIMIT = 1024 * 1024;

// ---------------------------------------------------------------------------------------------------------------
// The model: a tree of folders, each entry under its comparison key.

interface ModelFile {
  readonly type: 'file';
  name: string;
  readonly bytes: Buffer;
}
interface ModelFolder {
  readonly type: 'folder';
  name: string;
  readonly entries: Map<string, ModelEntry>;
}
type ModelEntry = ModelFile | ModelFolder;
interface Model {
  readonly root: ModelFolder;
}

/** An entry with where it is: what commands pick their targets from. */
interface Located {
  readonly path: string;
  readonly parent: ModelFolder;
  readonly entry: ModelEntry;
}

/**
 * The engine's comparison key (FORMAT.md 8.3, "Unique names") for the names generated here: they are ASCII, "é"
 * and "É" (in NFC or NFD), where per-code-point case folding is plain lowercasing of the NFC form.
 */
const keyOf = (name: string): string => name.normalize('NFC').toLowerCase();

/** Orders by UTF-16 code units, as the engine orders the names it reads from a folder on disk. */
const byName = (a: { name: string }, b: { name: string }): number =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : 0;

const newFolder = (name: string): ModelFolder => ({ type: 'folder', name, entries: new Map() });

function put(folder: ModelFolder, entry: ModelEntry): void {
  folder.entries.set(keyOf(entry.name), entry);
}

const childPath = (folderPath: string, name: string): string =>
  folderPath === '/' ? `/${name}` : `${folderPath}/${name}`;

/** Every entry below the root, parents before their children, in the model's (deterministic) map order. */
function locateAll(model: Model): Located[] {
  const out: Located[] = [];
  const visit = (folder: ModelFolder, path: string): void => {
    for (const entry of folder.entries.values()) {
      const located = { path: childPath(path, entry.name), parent: folder, entry };
      out.push(located);
      if (entry.type === 'folder') visit(entry, located.path);
    }
  };
  visit(model.root, '/');
  return out;
}

/** The root and every folder, with their paths. */
function foldersOf(model: Model): { path: string; folder: ModelFolder }[] {
  return [
    { path: '/', folder: model.root },
    ...locateAll(model).flatMap(({ path, entry }) =>
      entry.type === 'folder' ? [{ path, folder: entry }] : [],
    ),
  ];
}

const pick = <T>(items: readonly T[], index: number): T => {
  const item = items[index % items.length];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
};

/** "report.pdf" → "report (2).pdf", counting on from a name's own number, as the engine numbers kept copies. */
function numberedName(folder: ModelFolder, name: string): string {
  const dot = name.lastIndexOf('.');
  const hasExtension = dot > 0 && name.length - dot <= 16;
  const stem = hasExtension ? name.slice(0, dot) : name;
  const extension = hasExtension ? name.slice(dot) : '';
  const own = / \((\d+)\)$/.exec(stem);
  const base = own ? stem.slice(0, own.index) : stem;
  for (let n = own ? Number(own[1]) + 1 : 2; ; n++) {
    const candidate = `${base} (${n})${extension}`;
    if (!folder.entries.has(keyOf(candidate))) return candidate;
  }
}

/** The same name in other case and in NFD: the engine must treat it as the same name. */
const variantOf = (name: string): string =>
  name
    .normalize('NFD')
    .replace(/./gu, (ch) => (ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase()));

// ---------------------------------------------------------------------------------------------------------------
// What an add reads from disk.

interface DiskFile {
  readonly kind: 'file';
  readonly name: string;
  readonly size: number;
  readonly seed: number;
}
interface DiskFolder {
  readonly kind: 'folder';
  readonly name: string;
  readonly children: readonly DiskItem[];
}
type DiskItem = DiskFile | DiskFolder;

/**
 * Contents that differ from file to file (by seed) and from one 64 KiB chunk to the next (101 is odd, so no two of
 * a file's first 256 chunks are alike), so a file or chunk put in the wrong place shows.
 */
function contentsOf(file: DiskFile): Buffer {
  const bytes = Buffer.alloc(file.size);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (file.seed + i * 13 + Math.floor(i / CHUNK) * 101) & 0xff;
  return bytes;
}

/** Writes `item` into `dir`: its files through writeTree, its folders here (so an empty one is written too). */
async function writeDiskItem(item: DiskItem, dir: string): Promise<void> {
  const files: Record<string, Buffer> = {};
  const visit = (at: DiskItem, prefix: string): void => {
    const path = join(prefix, at.name);
    if (at.kind === 'file') files[path] = contentsOf(at);
    else {
      mkdirSync(join(dir, path), { recursive: true });
      for (const child of at.children) visit(child, path);
    }
  };
  visit(item, '');
  await writeTree(dir, files);
}

interface AddOutcome {
  problems: number;
  skipped: number;
}

/** What adding `item` into `folder` does, in the engine's order: depth first, each folder's names sorted. */
function modelAdd(folder: ModelFolder, item: DiskItem, onExisting: OnExisting, outcome: AddOutcome): void {
  const name = item.name.normalize('NFC');
  const existing = folder.entries.get(keyOf(name));
  const refuse = (): void => {
    if (onExisting === 'skip') outcome.skipped++;
    else outcome.problems++;
  };
  if (item.kind === 'file') {
    const file: ModelFile = { type: 'file', name, bytes: contentsOf(item) };
    if (existing === undefined) put(folder, file);
    else if (onExisting === 'keep-both') put(folder, { ...file, name: numberedName(folder, name) });
    else if (onExisting === 'replace' && existing.type === 'file') {
      folder.entries.delete(keyOf(name));
      put(folder, file);
    } else refuse();
    return;
  }
  let target: ModelFolder;
  if (existing?.type === 'folder') target = existing;
  else if (existing === undefined || onExisting === 'keep-both') {
    target = newFolder(existing === undefined ? name : numberedName(folder, name));
    put(folder, target);
  } else {
    refuse();
    return;
  }
  for (const child of [...item.children].sort(byName)) modelAdd(target, child, onExisting, outcome);
}

// ---------------------------------------------------------------------------------------------------------------
// Checks against the real vault.

interface Real {
  vault: Vault;
  readonly dir: string;
  readonly root: string;
  /** Numbers each add's source folder and each restore's destination, so none meets an earlier one. */
  serial: number;
}

function expectListingsMatch(model: Model, vault: Vault): void {
  for (const { path, folder } of foldersOf(model)) {
    const listed = vault
      .list(path)
      .map(({ name, type, size }) => ({ name, type, size }))
      .sort(byName);
    const expected = [...folder.entries.values()]
      .map((entry) => ({
        name: entry.name,
        type: entry.type,
        size: entry.type === 'file' ? entry.bytes.length : 0,
      }))
      .sort(byName);
    expect(listed, `listing of ${path}`).toEqual(expected);
  }
}

function expectOnDisk(folder: ModelFolder, dir: string, path: string): void {
  const names = existsSync(dir) ? readdirSync(dir).sort() : [];
  expect(names, `restored ${path}`).toEqual([...folder.entries.values()].map((entry) => entry.name).sort());
  for (const entry of folder.entries.values()) {
    const at = join(dir, entry.name);
    if (entry.type === 'folder') {
      expect(statSync(at).isDirectory(), `${childPath(path, entry.name)} is a folder`).toBe(true);
      expectOnDisk(entry, at, childPath(path, entry.name));
    } else expect(readFileSync(at).equals(entry.bytes), `bytes of ${childPath(path, entry.name)}`).toBe(true);
  }
}

/** Restores everything and compares it with the model, then verifies the vault. */
async function expectRestoreAndVerify(model: Model, real: Real): Promise<void> {
  const out = join(real.root, `restored-${String(real.serial++)}`);
  const report = await real.vault.restore(['/'], out, { stateDir: join(real.root, 'state') });
  expect(report.problems).toEqual([]);
  expectOnDisk(model.root, out, '/');
  rmSync(out, { recursive: true, force: true });
  const verified = await real.vault.verify({ readData: true });
  expect(verified.problems).toEqual([]);
  expect(verified.unreferenced).toEqual([]);
  expect(verified.ok).toBe(true);
}

// ---------------------------------------------------------------------------------------------------------------
// Commands.

type Command = fc.AsyncCommand<Model, Real>;
const hasEntries = (model: Readonly<Model>): boolean => model.root.entries.size > 0;

class AddCommand implements Command {
  constructor(
    readonly folderPick: number,
    readonly item: DiskItem,
    readonly onExisting: OnExisting,
    /** Name the added item after an entry of the destination (in another case or form), when it has one. */
    readonly reuseName: boolean,
  ) {}
  check = (): boolean => true;
  async run(model: Model, real: Real): Promise<void> {
    const { path, folder } = pick(foldersOf(model), this.folderPick);
    const taken = [...folder.entries.values()];
    const item =
      this.reuseName && taken.length > 0
        ? { ...this.item, name: variantOf(pick(taken, this.folderPick).name) }
        : this.item;
    const source = join(real.root, `source-${String(real.serial++)}`);
    await writeDiskItem(item, source);
    const report = await real.vault.add([join(source, item.name)], path, { onExisting: this.onExisting });
    rmSync(source, { recursive: true, force: true });
    const outcome = { problems: 0, skipped: 0 };
    modelAdd(folder, item, this.onExisting, outcome);
    expect(report.problems.map((problem) => problem.code)).toEqual(
      Array<string>(outcome.problems).fill('ALREADY_EXISTS'),
    );
    expect(report.skipped).toBe(outcome.skipped);
    expectListingsMatch(model, real.vault);
  }
  toString(): string {
    return `add(${JSON.stringify(this.item)}, into #${String(this.folderPick)}, ${this.onExisting}${this.reuseName ? ', reusing a name' : ''})`;
  }
}

class MkdirCommand implements Command {
  constructor(
    readonly folderPick: number,
    readonly name: string,
    /** When given, picks an entry anywhere whose name (in another case and form) is used instead: moves then clash. */
    readonly reusePick: number | undefined,
  ) {}
  check = (): boolean => true;
  run(model: Model, real: Real): Promise<void> {
    const everywhere = locateAll(model);
    const name =
      this.reusePick === undefined || everywhere.length === 0
        ? this.name
        : variantOf(pick(everywhere, this.reusePick).entry.name);
    const { path, folder } = pick(foldersOf(model), this.folderPick);
    const existing = folder.entries.get(keyOf(name));
    const target = childPath(path, name);
    if (existing?.type === 'file') expect(() => real.vault.mkdir(target)).toThrow(AlreadyExistsError);
    else {
      real.vault.mkdir(target);
      if (existing === undefined) put(folder, newFolder(name.normalize('NFC')));
    }
    expectListingsMatch(model, real.vault);
    return Promise.resolve();
  }
  toString(): string {
    const reusing = this.reusePick === undefined ? '' : `, reusing the name of #${String(this.reusePick)}`;
    return `mkdir(#${String(this.folderPick)}, ${JSON.stringify(this.name)}${reusing})`;
  }
}

type NewName = { readonly kind: 'name'; readonly name: string } | { readonly kind: 'own' | 'sibling' };

class RenameCommand implements Command {
  constructor(
    readonly targetPick: number,
    readonly newName: NewName,
  ) {}
  check = hasEntries;
  run(model: Model, real: Real): Promise<void> {
    const { path, parent, entry } = pick(locateAll(model), this.targetPick);
    const siblings = [...parent.entries.values()].filter((other) => other !== entry);
    const newName =
      this.newName.kind === 'name'
        ? this.newName.name
        : variantOf(
            this.newName.kind === 'sibling' && siblings.length > 0
              ? pick(siblings, this.targetPick).name
              : entry.name,
          );
    const clash = parent.entries.get(keyOf(newName));
    if (clash !== undefined && clash !== entry)
      expect(() => real.vault.rename(path, newName)).toThrow(AlreadyExistsError);
    else {
      real.vault.rename(path, newName);
      parent.entries.delete(keyOf(entry.name));
      entry.name = newName.normalize('NFC');
      put(parent, entry);
    }
    expectListingsMatch(model, real.vault);
    return Promise.resolve();
  }
  toString(): string {
    return `rename(#${String(this.targetPick)}, ${JSON.stringify(this.newName)})`;
  }
}

class MoveCommand implements Command {
  constructor(
    readonly targetPicks: readonly number[],
    readonly destinationPick: number,
    /** Into a folder that already has the first target's name, when there is one. */
    readonly ontoTaken: boolean,
  ) {}
  check = hasEntries;
  run(model: Model, real: Real): Promise<void> {
    const located = locateAll(model);
    const targets = [...new Set(this.targetPicks.map((index) => pick(located, index)))];
    const first = pick(targets, 0);
    const folders = foldersOf(model);
    const taken = this.ontoTaken
      ? folders.filter(({ folder }) => folder !== first.parent && folder.entries.has(keyOf(first.entry.name)))
      : [];
    const destination = pick(taken.length > 0 ? taken : folders, this.destinationPick);
    const paths = targets.map((target) => target.path);
    const intoItself = targets.some(
      ({ path }) => destination.path === path || destination.path.startsWith(`${path}/`),
    );
    // Moved one after another, all or nothing: the first name the destination already has refuses the move.
    const names = new Set(destination.folder.entries.keys());
    const clashes = targets.some(({ parent, entry }) => {
      if (parent === destination.folder) names.delete(keyOf(entry.name));
      if (names.has(keyOf(entry.name))) return true;
      names.add(keyOf(entry.name));
      return false;
    });
    if (intoItself) expect(() => real.vault.move(paths, destination.path)).toThrow(InvalidArgumentError);
    else if (clashes) expect(() => real.vault.move(paths, destination.path)).toThrow(AlreadyExistsError);
    else {
      real.vault.move(paths, destination.path);
      for (const { parent, entry } of targets) {
        parent.entries.delete(keyOf(entry.name));
        put(destination.folder, entry);
      }
    }
    expectListingsMatch(model, real.vault);
    return Promise.resolve();
  }
  toString(): string {
    const onto = this.ontoTaken ? ', onto a taken name' : '';
    return `move([${this.targetPicks.map((index) => `#${String(index)}`).join(', ')}], into #${String(this.destinationPick)}${onto})`;
  }
}

class DeleteCommand implements Command {
  constructor(readonly targetPicks: readonly number[]) {}
  check = hasEntries;
  async run(model: Model, real: Real): Promise<void> {
    const located = locateAll(model);
    const targets = this.targetPicks.map((index) => pick(located, index));
    const deleted = await real.vault.remove(targets.map((target) => target.path));
    const doomed = new Set<ModelEntry>();
    const collect = (entry: ModelEntry): void => {
      doomed.add(entry);
      if (entry.type === 'folder') for (const child of entry.entries.values()) collect(child);
    };
    for (const { parent, entry } of targets) {
      collect(entry);
      parent.entries.delete(keyOf(entry.name));
    }
    expect(deleted).toBe(doomed.size);
    expectListingsMatch(model, real.vault);
  }
  toString(): string {
    return `delete([${this.targetPicks.map((index) => `#${String(index)}`).join(', ')}])`;
  }
}

/** Locks and unlocks with the same passphrase, or closes and opens the vault again first, as after a restart. */
class RelockCommand implements Command {
  constructor(readonly reopen: boolean) {}
  check = (): boolean => true;
  async run(model: Model, real: Real): Promise<void> {
    if (this.reopen) {
      real.vault.close();
      await real.vault.released();
      real.vault = await Vault.open(real.dir, { sodium: nativeSodium });
      expect(real.vault.warnings).toEqual([]);
    } else {
      real.vault.lock();
      await real.vault.released();
    }
    expect(real.vault.locked).toBe(true);
    expect(await real.vault.unlock(passphrase())).toEqual([]);
    expectListingsMatch(model, real.vault);
  }
  toString(): string {
    return this.reopen ? 'close, open, unlock' : 'lock, unlock';
  }
}

class RestoreCommand implements Command {
  check = (): boolean => true;
  async run(model: Model, real: Real): Promise<void> {
    await expectRestoreAndVerify(model, real);
  }
  toString = (): string => 'restore everything, verify';
}

// ---------------------------------------------------------------------------------------------------------------
// Generators.

/**
 * Names from a few pieces, so that they often meet: letters in both cases, "é" and "É" in NFC and NFD (one name to
 * the engine), spaces and dots inside a name. None ends in a dot or a space, which no name may.
 */
const nameArb = fc
  .array(fc.constantFrom('a', 'A', 'b', 'B', 'é', 'e\u0301', 'É', 'E\u0301', ' ', '.', '1'), {
    minLength: 1,
    maxLength: 3,
  })
  .map((pieces) => pieces.join(''))
  .filter((name) => !/[. ]$/.test(name));

const sizeArb = fc.oneof(
  { weight: 2, arbitrary: fc.constant(0) },
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 3000 }) },
  { weight: 2, arbitrary: fc.integer({ min: CHUNK + 1, max: 3 * CHUNK }) },
  { weight: 1, arbitrary: fc.integer({ min: PACK_LIMIT + 1, max: PACK_LIMIT + CHUNK }) },
);

const fileArb: fc.Arbitrary<DiskFile> = fc.record({
  kind: fc.constant('file' as const),
  name: nameArb,
  size: sizeArb,
  seed: fc.nat(255),
});

const folderOf = (child: fc.Arbitrary<DiskItem>): fc.Arbitrary<DiskFolder> =>
  fc.record({
    kind: fc.constant('folder' as const),
    name: nameArb,
    children: fc.uniqueArray(child, { selector: (item) => item.name, maxLength: 3 }),
  });

/** A file, or a folder of files and folders two levels deep. Disk names in one folder differ (as bytes only). */
const diskItemArb: fc.Arbitrary<DiskItem> = fc.oneof(
  { weight: 3, arbitrary: fileArb },
  {
    weight: 1,
    arbitrary: folderOf(
      fc.oneof({ weight: 3, arbitrary: fileArb }, { weight: 1, arbitrary: folderOf(fileArb) }),
    ),
  },
);

const onExistingArb = fc.constantFrom<OnExisting>('fail', 'skip', 'keep-both', 'replace');

/** Indexes into the model's entries or folders, taken modulo their count when the command runs. */
const pickArb = fc.nat(63);
const picksArb = fc.array(pickArb, { minLength: 1, maxLength: 2 });

/** Mostly changes, adds the most; each command checks every listing, so restores and re-opens can be rarer. */
const commandArb: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(pickArb, diskItemArb, onExistingArb, fc.boolean())
      .map(([folder, item, onExisting, reuse]) => new AddCommand(folder, item, onExisting, reuse)),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(pickArb, nameArb, fc.option(pickArb, { nil: undefined }))
      .map(([folder, name, reuse]) => new MkdirCommand(folder, name, reuse)),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        pickArb,
        fc.oneof(
          nameArb.map((name): NewName => ({ kind: 'name', name })),
          fc.constantFrom<NewName>({ kind: 'own' }, { kind: 'sibling' }),
        ),
      )
      .map(([target, newName]) => new RenameCommand(target, newName)),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(picksArb, pickArb, fc.boolean())
      .map(([targets, destination, ontoTaken]) => new MoveCommand(targets, destination, ontoTaken)),
  },
  { weight: 2, arbitrary: picksArb.map((targets) => new DeleteCommand(targets)) },
  { weight: 2, arbitrary: fc.boolean().map((reopen) => new RelockCommand(reopen)) },
  { weight: 1, arbitrary: fc.constant(new RestoreCommand()) },
);

const commandsArb = fc.commands([commandArb], { maxCommands: MAX_COMMANDS, size: 'max' });

// ---------------------------------------------------------------------------------------------------------------

const replay =
  process.env.COFFER_MODEL_SEED === undefined
    ? {}
    : { seed: Number(process.env.COFFER_MODEL_SEED), path: process.env.COFFER_MODEL_PATH };

it(
  `a vault matches an in-memory model over ${String(RUNS)} random command sequences`,
  async () => {
    await fc.assert(
      fc.asyncProperty(commandsArb, async (commands) => {
        const { vault, dir, root } = await newVault();
        const real: Real = { vault, dir, root, serial: 0 };
        const model: Model = { root: newFolder('') };
        try {
          await fc.asyncModelRun(() => ({ model, real }), commands);
          await expectRestoreAndVerify(model, real);
        } finally {
          real.vault.close();
          await real.vault.released();
        }
        expect(leftBehind(dir)).toEqual({ files: [], intents: 0 });
        // Now rather than after the test (newVault's cleanup does it then), so a long soak does not fill the disk.
        rmSync(root, { recursive: true, force: true });
      }),
      { numRuns: RUNS, ...replay },
    );
  },
  60_000 + RUNS * 3_000,
);

import { AlreadyExistsError, IntegrityError, NotFoundError } from '../errors.js';
import { nameKey } from '../../shared/name-key.js';
import { formatVaultPath } from '../names.js';

/** What a sealed index record holds (FORMAT.md section 8). */
export interface NodeRecord {
  readonly type: 'file' | 'folder';
  readonly name: string;
  /** Hex id of the parent folder; `null` for the root. */
  readonly parent: string | null;
  readonly size: number;
  readonly mtime: number;
  /** Hex id of the file's content blob; files only. */
  readonly fileId?: string;
}

/** A decrypted index row held in memory while the vault is unlocked. */
export interface TreeNode extends NodeRecord {
  /** Hex of the row's 16-byte record id. */
  readonly id: string;
  readonly keyId: number;
}

const ROOT = '';

interface StoredRecord {
  t: 'f' | 'd';
  n: string;
  p: string;
  s: number;
  m: number;
  c?: string;
}

/** Serialises a record as compact JSON; the sealer pads it, so short keys only save memory and time. */
export function encodeRecord(record: NodeRecord): Buffer {
  const stored: StoredRecord = {
    t: record.type === 'file' ? 'f' : 'd',
    n: record.name,
    p: record.parent ?? ROOT,
    s: record.size,
    m: record.mtime,
    ...(record.fileId === undefined ? {} : { c: record.fileId }),
  };
  return Buffer.from(JSON.stringify(stored), 'utf8');
}

const HEX_ID = /^[0-9a-f]{32}$/;

// Fatal: invalid UTF-8 is refused, not turned into U+FFFD (two different records would decode alike). The BOM is
// kept, so JSON.parse refuses a record that starts with one: a writer never writes it.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** How many keys a file's record has (t, n, p, s, m, c); a folder's has all but `c`. */
const FILE_RECORD_KEYS = 6;

/**
 * How many colons `text` holds. In a record that is valid JSON of the right shape, that is how many keys were
 * written: no value holds one (a name may not contain ":", section 8.3; the ids are hex, the sizes and times
 * numbers), so a count above the keys parsed is a key written twice, or a name refused anyway.
 */
function colonsIn(text: string): number {
  let count = 0;
  for (let at = text.indexOf(':'); at !== -1; at = text.indexOf(':', at + 1)) count++;
  return count;
}

/**
 * Parses a decrypted record into the node of its row `id` (hex) with key id `keyId`, rejecting any shape a writer
 * does not produce (FORMAT.md section 8.3): exactly its keys, each of its type, a folder's size 0. Builds the node
 * in one object: an unlock from the rows decodes one per entry.
 * @throws {@link IntegrityError} (`malformed`) for anything else.
 */
export function decodeNode(bytes: Buffer, id: string, keyId: number): TreeNode {
  const malformed = (): IntegrityError =>
    new IntegrityError('malformed', { subject: 'metadata record', fileId: id });
  let text: string;
  let parsed: unknown;
  try {
    text = UTF8.decode(bytes);
    parsed = JSON.parse(text);
  } catch {
    throw malformed();
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw malformed();
  const { t, n, p, s, m, c } = parsed as Partial<Record<keyof StoredRecord, unknown>>;
  if ((t !== 'f' && t !== 'd') || typeof n !== 'string' || typeof p !== 'string') throw malformed();
  if (!Number.isSafeInteger(s) || (s as number) < 0 || typeof m !== 'number' || !Number.isFinite(m))
    throw malformed();
  if (p !== ROOT && !HEX_ID.test(p)) throw malformed();
  if (t === 'f' ? typeof c !== 'string' || !HEX_ID.test(c) : c !== undefined || s !== 0) throw malformed();
  // Every key read above is present, so another count means a key a writer never writes; a key written twice
  // (JSON.parse keeps the last, another reader may keep the first) is counted as written.
  const keys = t === 'f' ? FILE_RECORD_KEYS : FILE_RECORD_KEYS - 1;
  if (Object.keys(parsed).length !== keys || colonsIn(text) !== keys) throw malformed();
  const parent = p === ROOT ? null : p;
  return typeof c === 'string'
    ? { id, keyId, type: 'file', name: n, parent, size: s as number, mtime: m, fileId: c }
    : { id, keyId, type: 'folder', name: n, parent, size: s as number, mtime: m };
}

/**
 * The folder tree of an unlocked vault, indexed by id and by (parent, case-folded name). Names are unique within a
 * folder ignoring case and Unicode normalisation, so a vault restores onto any filesystem.
 */
export class Tree {
  readonly #nodes = new Map<string, TreeNode>();
  readonly #children = new Map<string, Map<string, TreeNode>>();
  /**
   * Rows an add has placed and not committed yet (FORMAT.md 8.5), each with the committed file it is to replace
   * (or null): later names of the add are placed against them ({@link Tree.child}), but they are not in the vault
   * yet, so listing, search and paths leave them out and show the file they replace, which still is.
   */
  readonly #uncommitted = new Map<string, TreeNode | null>();
  /** Adds the entries held back by {@link Tree.deferAllButRoot}, and `drop` forgets them unread. */
  #rest: { add: () => void; drop: () => void } | undefined;

  /**
   * Holds back every entry below the root's until something other than a listing of the root needs the tree: an
   * unlock shows the root first, and building the whole tree of a large vault took most of it. `add` inserts them;
   * it runs once, at the first such need. {@link Tree.clear} calls `drop` instead when it never ran.
   */
  deferAllButRoot(add: () => void, drop: () => void): void {
    this.#rest = { add, drop };
  }

  /** Adds what {@link Tree.deferAllButRoot} held back. */
  #complete(): void {
    const rest = this.#rest;
    if (rest === undefined) return;
    this.#rest = undefined;
    rest.add();
  }

  /** How many entries are in the vault (as {@link Tree.values} lists them). */
  get size(): number {
    this.#complete();
    return this.#nodes.size - this.#uncommitted.size;
  }

  /** Every entry in the vault: not the rows an add has yet to commit. */
  values(): Iterable<TreeNode> {
    this.#complete();
    return this.#committed(this.#nodes.values());
  }

  get(id: string): TreeNode | undefined {
    this.#complete();
    return this.#nodes.get(id);
  }

  /**
   * The node called `name` in folder `parent` (`null` = root), compared ignoring case and normalisation, committed
   * or not: what a new name must not clash with.
   */
  child(parent: string | null, name: string): TreeNode | undefined {
    // The root's entries are all here, but a write that finds its name free must see the whole tree afterwards.
    this.#complete();
    return this.#children.get(parent ?? ROOT)?.get(nameKey(name));
  }

  /**
   * The entries of a folder that are in the vault, without copying them out (the caller must not change the tree
   * while iterating).
   */
  children(parent: string | null): Iterable<TreeNode> {
    if (parent !== null) this.#complete();
    const named = this.#children.get(parent ?? ROOT)?.values() ?? [];
    return this.#uncommitted.size === 0 ? named : this.#inVault(named);
  }

  /** What of `named` (the holders of names) is in the vault: a committed row, or what an uncommitted one replaces. */
  *#inVault(named: Iterable<TreeNode>): Iterable<TreeNode> {
    for (const node of named) {
      const shown = this.#shownFor(node);
      if (shown) yield shown;
    }
  }

  /** What the vault has under `node`'s name: `node` once committed, else the file it is to replace, if any. */
  #shownFor(node: TreeNode): TreeNode | undefined {
    const replaced = this.#uncommitted.get(node.id);
    return replaced === undefined ? node : (replaced ?? undefined);
  }

  *#onlyCommitted(nodes: Iterable<TreeNode>): Iterable<TreeNode> {
    for (const node of nodes) if (!this.#uncommitted.has(node.id)) yield node;
  }

  #committed(nodes: Iterable<TreeNode>): Iterable<TreeNode> {
    return this.#uncommitted.size === 0 ? nodes : this.#onlyCommitted(nodes);
  }

  childrenOf(parent: string | null): TreeNode[] {
    return [...this.children(parent)];
  }

  /**
   * Adds a node.
   * @throws {@link AlreadyExistsError} when its folder already has an entry with that name.
   */
  insert(node: TreeNode): void {
    this.#complete();
    const key = nameKey(node.name);
    let siblings = this.#children.get(node.parent ?? ROOT);
    if (!siblings) {
      siblings = new Map();
      this.#children.set(node.parent ?? ROOT, siblings);
    }
    const existing = siblings.get(key);
    if (existing && existing.id !== node.id) {
      throw new AlreadyExistsError(
        `"${this.pathOf(existing)}" already exists. Rename or move one of them, or choose another folder.`,
      );
    }
    siblings.set(key, node);
    this.#nodes.set(node.id, node);
  }

  /**
   * Adds a row an add has not committed yet, in place of the committed file `replacing` of the same name if given:
   * {@link Tree.child} finds the new row, everything else still finds `replacing` (or nothing) until
   * {@link Tree.markCommitted}.
   * @throws {@link AlreadyExistsError} as {@link Tree.insert} does.
   */
  insertUncommitted(node: TreeNode, replacing?: TreeNode): void {
    this.#complete();
    const siblings = this.#children.get(node.parent ?? ROOT);
    const key = nameKey(node.name);
    if (replacing && siblings?.get(key)?.id === replacing.id) siblings.delete(key);
    try {
      this.insert(node);
    } catch (error) {
      if (replacing) siblings?.set(key, replacing);
      throw error;
    }
    this.#uncommitted.set(node.id, replacing ?? null);
  }

  /** The add committed these rows: they are in the vault now, and the files they replaced are not. */
  markCommitted(ids: Iterable<string>): void {
    for (const id of ids) {
      const replaced = this.#uncommitted.get(id);
      this.#uncommitted.delete(id);
      if (replaced) this.#nodes.delete(replaced.id);
    }
  }

  remove(id: string): void {
    this.#complete();
    const node = this.#nodes.get(id);
    if (!node) return;
    this.#nodes.delete(id);
    const replaced = this.#uncommitted.get(id);
    this.#uncommitted.delete(id);
    const siblings = this.#children.get(node.parent ?? ROOT);
    const key = nameKey(node.name);
    if (siblings?.get(key)?.id === id) siblings.delete(key);
    // An uncommitted row taken out gives its name back to the file it was to replace.
    if (replaced) siblings?.set(key, replaced);
    if (node.type === 'folder' && this.#children.get(id)?.size === 0) this.#children.delete(id);
  }

  /** Replaces a node's record (rename or move), keeping the indexes consistent. */
  replace(node: TreeNode): void {
    this.#complete();
    const previous = this.#nodes.get(node.id);
    if (!previous) throw new NotFoundError('That item no longer exists in the vault.');
    const uncommitted = this.#uncommitted.has(node.id);
    // Changes beside an add have it commit first (Vault.#besideAdd): one in front of a file never moves.
    if (this.#uncommitted.get(node.id))
      throw new Error('internal error: a row replacing a file was moved before it was committed');
    this.remove(node.id);
    try {
      this.insert(node);
    } catch (error) {
      this.insert(previous);
      throw error;
    } finally {
      if (uncommitted) this.#uncommitted.set(node.id, null);
    }
  }

  /**
   * The node at a parsed vault path; `null` for the root.
   * @throws {@link NotFoundError} when any component is missing, or not committed yet.
   */
  resolve(parts: readonly string[]): TreeNode | null {
    let current: TreeNode | null = null;
    for (const [index, part] of parts.entries()) {
      if (current !== null && current.type !== 'folder') {
        throw new NotFoundError(`"${formatVaultPath(parts.slice(0, index))}" is a file, not a folder.`);
      }
      const named = this.child(current?.id ?? null, part);
      const next = named && this.#shownFor(named);
      if (!next) {
        throw new NotFoundError(
          `"${formatVaultPath(parts.slice(0, index + 1))}" does not exist in the vault. Check the path and try again.`,
        );
      }
      current = next;
    }
    return current;
  }

  /** The node's components from the root, or `undefined` if its chain of parents is broken or loops. */
  partsOf(node: TreeNode): string[] | undefined {
    const parts: string[] = [];
    for (let at: TreeNode | undefined = node; at;) {
      parts.unshift(at.name);
      // Held-back entries are below the root's: counting without them stops no path early.
      if (parts.length > this.#nodes.size) return undefined;
      if (at.parent === null) return parts;
      at = this.get(at.parent);
    }
    return undefined;
  }

  /** The node's vault path ("/" for `null`, the root); a node whose parent chain is broken shows as "/?/name". */
  pathOf(node: TreeNode | null): string {
    if (node === null) return '/';
    return `/${(this.partsOf(node) ?? ['?', node.name]).join('/')}`;
  }

  /** The node and everything below it, children before their folder (the order deletion wants). */
  subtree(node: TreeNode): TreeNode[] {
    const out: TreeNode[] = [];
    const visit = (at: TreeNode): void => {
      if (at.type === 'folder') for (const child of this.childrenOf(at.id)) visit(child);
      out.push(at);
    };
    visit(node);
    return out;
  }

  isAncestor(ancestor: TreeNode, node: TreeNode): boolean {
    for (let at: TreeNode | undefined = node; at; at = at.parent === null ? undefined : this.get(at.parent)) {
      if (at.id === ancestor.id) return true;
    }
    return false;
  }

  clear(): void {
    this.#rest?.drop();
    this.#rest = undefined;
    this.#nodes.clear();
    this.#children.clear();
    this.#uncommitted.clear();
  }
}

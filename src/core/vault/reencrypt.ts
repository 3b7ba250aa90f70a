import { open } from 'node:fs/promises';

import { BLOB_HEADER_BYTES, BLOB_MAGIC, ChunkCipher } from '../crypto/content.js';
import { sharedCryptoPool } from '../crypto/pool.js';
import { CancelledError, CofferError, IntegrityError, IoError } from '../errors.js';
import { writeFileAtomicSync } from '../publish.js';
import type { Problem, Progress } from '../types.js';
import { newContent, sealInMemory, writeBlobFile } from './add.js';
import { sealIntoBlob, streamSource } from './blob-io.js';
import { asIoError } from './durable.js';
import type { BlobLocation, ContentRow, Intent } from './index-db.js';
import { blobPath, packPaths, SMALL_FILE_LIMIT, VAULT_READ_FLAGS } from './layout.js';
import { settleIntents } from './leftovers.js';
import { ByteSteps } from './progress.js';
import { decryptSmallFile, plaintextChunks } from './read.js';
import type { Session } from './session.js';
import type { TreeNode } from './tree.js';

/*
 * Re-encryption (FORMAT.md section 11): every file's blob, every record, the tree snapshot, the index commitment and
 * the activity log moved from older DEKs to the active one, a batch at a time. There is no progress marker: what
 * still names an older key id is what is left to do, so a job stopped anywhere (a crash, a cancel, a lock) is
 * continued by starting it again.
 */

/** A pack of re-encrypted small files holds at most this many files and about this many bytes (as adds do). */
const PACK_MAX_FILES = 128;
const PACK_MAX_BYTES = 4 * 1024 * 1024;
/** Records resealed in one transaction. */
const RECORD_BATCH = 1000;

/** What a re-encryption did so far. */
export interface ReencryptCounts {
  files: number;
  bytes: number;
  records: number;
}

/**
 * The key id a file's stored blob names in its header (FORMAT.md 5.1), read without opening it; `undefined` when it
 * cannot be read (missing, damaged): re-encrypting it then reports why.
 */
async function blobKeyId(session: Session, node: TreeNode): Promise<number | undefined> {
  const header = new Uint8Array(BLOB_HEADER_BYTES);
  let got: number;
  try {
    const location = session.db.blobOf(Buffer.from(node.fileId ?? '', 'hex'));
    if (location === undefined) return undefined;
    if (location.kind === 'inline') {
      got = location.bytes.copy(header);
    } else if (location.kind === 'pack') {
      const { source, release } = session.packs.source(location);
      try {
        got = await source.readv([header], 0);
      } finally {
        release();
      }
    } else {
      const handle = await open(
        blobPath(session.dir, Buffer.from(node.fileId ?? '', 'hex')),
        VAULT_READ_FLAGS,
      );
      try {
        ({ bytesRead: got } = await handle.read(header, 0, BLOB_HEADER_BYTES, 0));
      } finally {
        await handle.close();
      }
    }
  } catch {
    return undefined;
  }
  const bytes = Buffer.from(header.buffer, 0, got);
  if (got < BLOB_HEADER_BYTES || !bytes.subarray(0, BLOB_MAGIC.length).equals(BLOB_MAGIC)) return undefined;
  return bytes.readUInt32LE(16);
}

/** What is left to re-encrypt, in the order it is done. */
export interface ReencryptPlan {
  /** Files whose blob is under an older key (or cannot be read), small ones grouped by pack, then large ones. */
  readonly files: TreeNode[];
  /** Rows whose record is under an older key, other than those files' (sealed again with their contents). */
  readonly records: Buffer[];
}

/**
 * Finds everything under another key than the active one: rows by their key id, blobs by the key id in their
 * header. O(entries), one 52-byte read per file.
 */
async function planReencryption(session: Session, signal: AbortSignal): Promise<ReencryptPlan> {
  const active = session.keys.keyring.activeKeyId;
  const small: { node: TreeNode; location: BlobLocation | undefined }[] = [];
  const large: TreeNode[] = [];
  for (const node of session.tree.values()) {
    if (signal.aborted) throw new CancelledError();
    if (node.type !== 'file' || (await blobKeyId(session, node)) === active) continue;
    if (node.size > SMALL_FILE_LIMIT) large.push(node);
    else small.push({ node, location: locationOf(session, node) });
  }
  // Small files in pack order: each old pack is emptied by consecutive batches and then removed.
  small.sort((a, b) => packOrder(a.location).localeCompare(packOrder(b.location)));
  const files = [...small.map(({ node }) => node), ...large];
  const withContents = new Set(files.map((node) => node.id));
  const records = session.db.nodeIdsNotUnder(active).filter((id) => !withContents.has(id.toString('hex')));
  return { files, records };
}

function locationOf(session: Session, node: TreeNode): BlobLocation | undefined {
  try {
    return session.db.blobOf(Buffer.from(node.fileId ?? '', 'hex'));
  } catch {
    return undefined;
  }
}

function packOrder(location: BlobLocation | undefined): string {
  if (location?.kind !== 'pack') return '';
  return `${location.packId.toString('hex')}:${location.offset.toString().padStart(16, '0')}`;
}

/** What stops naming an old blob once its file points at a new one. */
function releaseOf(location: BlobLocation | undefined, fileId: Buffer): Intent[] {
  if (location?.kind === 'pack') return [{ kind: 'pack', id: location.packId }];
  if (location?.kind === 'file') return [{ kind: 'blob', id: fileId }];
  return [];
}

/** A file re-encrypted into a new blob, waiting for the transaction that points its row at it. */
interface Switch {
  readonly node: TreeNode;
  readonly fileId: Buffer;
  readonly location: ContentRow['location'];
}

/**
 * Re-encrypts a planned vault a batch at a time ({@link Reencryption.step}), each batch under the vault's write
 * access, so reads run between batches. Every new blob goes through an intent, a temp file, fsync and rename like an
 * add's; one transaction then points the rows at the new blobs (and seals their records again), and only after it
 * are the old blob files and emptied packs removed, through the intents that transaction recorded.
 */
export class Reencryption {
  readonly counts: ReencryptCounts = { files: 0, bytes: 0, records: 0 };
  readonly problems: Problem[] = [];
  /** Rows that could not be re-encrypted (damage): not tried again in this job. */
  readonly #failed = new Set<string>();
  #plan: ReencryptPlan = { files: [], records: [] };
  #progress: Progress = { filesDone: 0, filesTotal: 0, bytesDone: 0, bytesTotal: 0 };

  constructor(
    private readonly session: Session,
    private readonly onProgress?: (progress: Progress) => void,
  ) {}

  /** Plans (or plans again) what is left; false when nothing is (but what failed). */
  async plan(signal: AbortSignal): Promise<boolean> {
    const planned = await planReencryption(this.session, signal);
    const left = (id: string): boolean => !this.#failed.has(id);
    this.#plan = {
      files: planned.files.filter((node) => left(node.id)),
      records: planned.records.filter((id) => left(id.toString('hex'))),
    };
    const { files } = this.#plan;
    this.#report({
      filesTotal: this.#progress.filesDone + files.length,
      bytesTotal: this.#progress.bytesDone + files.reduce((sum, node) => sum + node.size, 0),
    });
    return files.length > 0 || this.#plan.records.length > 0;
  }

  /** Whether a row still names an older key because it could not be re-encrypted. */
  get incomplete(): boolean {
    return this.#failed.size > 0;
  }

  /**
   * Does the next batch of the plan: one large file, a pack's worth of small files, or a batch of records.
   * @returns false when the plan is done.
   * @throws {@link CancelledError} when `signal` aborts (what was committed stays; the rest is found again).
   * @throws {@link IoError} when the vault cannot be written.
   */
  async step(signal: AbortSignal): Promise<boolean> {
    const next = this.#plan.files[0];
    if (next) {
      if (next.size > SMALL_FILE_LIMIT) {
        this.#plan.files.shift();
        await this.#largeFile(next, signal);
      } else await this.#smallFiles(signal);
      return true;
    }
    if (this.#plan.records.length > 0) {
      this.#records(this.#plan.records.splice(0, RECORD_BATCH));
      return true;
    }
    return false;
  }

  #report(change: Partial<Progress>): void {
    this.#progress = { ...this.#progress, ...change };
    this.onProgress?.(this.#progress);
  }

  #fileDone(node: TreeNode, bytesReported = 0): void {
    this.#report({
      filesDone: this.#progress.filesDone + 1,
      bytesDone: this.#progress.bytesDone + node.size - bytesReported,
    });
  }

  /** The node as it is now, if it is still the file that was planned (a delete or replace between batches). */
  #current(node: TreeNode): TreeNode | undefined {
    const now = this.session.tree.get(node.id);
    return now?.type === 'file' && now.fileId === node.fileId ? now : undefined;
  }

  #fail(node: TreeNode | undefined, id: string, error: unknown): void {
    // A read the disk refused stops the job, large file or small: it is no fault of that file's.
    if (!(error instanceof CofferError) || error instanceof CancelledError || error instanceof IoError)
      throw error;
    this.#failed.add(id);
    this.problems.push({
      path: node ? this.session.tree.pathOf(node) : `(index row ${id})`,
      code: error.code,
      message: `Not re-encrypted: ${error.message}`,
    });
  }

  async #smallFiles(signal: AbortSignal): Promise<void> {
    const batch: { switch: Switch; blob: Buffer }[] = [];
    let bytes = 0;
    while (batch.length < PACK_MAX_FILES && bytes < PACK_MAX_BYTES) {
      const planned = this.#plan.files[0];
      if (!planned || planned.size > SMALL_FILE_LIMIT) break;
      this.#plan.files.shift();
      if (signal.aborted) throw new CancelledError();
      const node = this.#current(planned);
      if (!node) {
        this.#fileDone(planned);
        continue;
      }
      if (batch.length === 0) this.#report({ current: this.session.tree.pathOf(node) });
      let sealed;
      try {
        const plaintext = await decryptSmallFile(this.session, node);
        try {
          sealed = sealInMemory(this.session, plaintext);
        } finally {
          plaintext.fill(0);
        }
      } catch (error) {
        this.#fail(node, node.id, error);
        this.#fileDone(node);
        continue;
      }
      batch.push({ switch: { node, fileId: sealed.fileId, location: { kind: 'file' } }, blob: sealed.blob });
      bytes += sealed.blob.length;
    }
    if (batch.length === 0) return;
    const packId = this.session.newId();
    const written: Intent = { kind: 'pack', id: packId };
    let offset = 0;
    const switches = batch.map(({ switch: { node, fileId }, blob }): Switch => {
      offset += blob.length;
      return {
        node,
        fileId,
        location: { kind: 'pack', packId, offset: offset - blob.length, length: blob.length },
      };
    });
    this.session.db.recordIntents([written]);
    try {
      writeFileAtomicSync(packPaths(this.session.dir, packId), Buffer.concat(batch.map(({ blob }) => blob)));
      await this.#switch(switches, [written]);
    } catch (error) {
      await settleIntents(this.session.dir, this.session.db, [written]).catch(() => undefined);
      throw asIoError(error, 'Could not re-encrypt');
    }
    for (const { node } of switches) this.#fileDone(node);
  }

  async #largeFile(planned: TreeNode, signal: AbortSignal): Promise<void> {
    const node = this.#current(planned);
    if (!node) {
      this.#fileDone(planned);
      return;
    }
    const session = this.session;
    this.#report({ current: session.tree.pathOf(node) });
    const { fileId, header, key, binding } = newContent(session);
    const cipher = new ChunkCipher(session.sodium, key, binding, header);
    const written: Intent = { kind: 'blob', id: fileId };
    const steps = new ByteSteps((bytes) => {
      this.#report({ bytesDone: this.#progress.bytesDone + bytes });
    });
    session.db.recordIntents([written]);
    try {
      await writeBlobFile(session.dir, fileId, async (out) => {
        const plaintext = streamSource(plaintextChunks(session, node, undefined, signal));
        try {
          const complete = await sealIntoBlob({
            place: { sodium: session.sodium, executor: await sharedCryptoPool() },
            cipher,
            source: plaintext,
            size: node.size,
            target: out,
            signal,
            onBytes: (bytes) => {
              steps.add(bytes);
            },
          });
          if (!complete)
            throw new IntegrityError('truncated', { subject: `contents of "${session.tree.pathOf(node)}"` });
        } finally {
          await plaintext.close();
        }
      });
      await this.#switch([{ node, fileId, location: { kind: 'file' } }], [written]);
    } catch (error) {
      await settleIntents(session.dir, session.db, [written]).catch(() => undefined);
      steps.flush();
      if (error instanceof IntegrityError) {
        this.#fail(node, node.id, error);
        this.#fileDone(node, steps.reported);
        return;
      }
      throw error instanceof CofferError
        ? error
        : asIoError(error, `Could not re-encrypt "${session.tree.pathOf(node)}"`);
    } finally {
      cipher.wipe();
    }
    steps.flush();
    this.#fileDone(node, steps.reported);
  }

  /**
   * One transaction: each file's row sealed again under the active key naming its new blob, its contents row
   * pointing there, the new blobs' intents cleared and intents recorded for what the old rows named; then the old
   * blob files and packs no row names any more are removed.
   */
  async #switch(switches: readonly Switch[], written: readonly Intent[]): Promise<void> {
    const { session } = this;
    const { db } = session;
    const released: Intent[] = [];
    const rows = switches.map(({ node, fileId, location }) => {
      const oldFileId = Buffer.from(node.fileId ?? '', 'hex');
      released.push(...releaseOf(locationOf(session, node), oldFileId));
      const id = Buffer.from(node.id, 'hex');
      const row = session.seal(id, { ...node, fileId: fileId.toString('hex') }, session.nextVersion(id));
      return { row, oldFileId, content: { file_id: fileId, node_id: id, location } };
    });
    db.transaction(() => {
      for (const { row, oldFileId, content } of rows) {
        db.putNode(row);
        db.replaceContent(oldFileId, content);
      }
      db.clearIntents(written);
      db.recordIntents(released);
    });
    for (const { row } of rows) session.tree.replace(row.node);
    this.counts.files += switches.length;
    this.counts.bytes += switches.reduce((sum, { node }) => sum + node.size, 0);
    for (const { kind, id } of released) if (kind === 'pack') session.packs.forget(id);
    // Removal can wait: the intents are durable, and the next open or verify finishes it.
    await settleIntents(session.dir, db, released).catch(() => undefined);
  }

  /** Seals records again under the active key (folders, and files whose blob already is), in one transaction. */
  #records(ids: readonly Buffer[]): void {
    const { session } = this;
    const rows: ReturnType<Session['seal']>[] = [];
    for (const id of ids) {
      const hex = id.toString('hex');
      const node = session.tree.get(hex);
      if (!node) {
        // A row that did not open at unlock (damage, reported there and by verify) cannot be sealed again.
        this.#fail(undefined, hex, new IntegrityError('tampered', { subject: `index row ${hex}` }));
        continue;
      }
      rows.push(session.seal(id, node, session.nextVersion(id)));
    }
    if (rows.length === 0) return;
    try {
      session.db.transaction(() => {
        for (const row of rows) session.db.putNode(row);
      });
    } catch (error) {
      throw asIoError(error, 'Could not re-encrypt');
    }
    for (const row of rows) session.tree.replace(row.node);
    this.counts.records += rows.length;
  }
}

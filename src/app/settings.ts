import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';

import * as z from 'zod/mini';

import { InvalidArgumentError } from '../core/errors.js';
import { writeFileAtomic } from '../core/vault/durable.js';
import { DEFAULT_SETTINGS, settingsSchema, type Settings } from '../shared/contract.js';

export const SETTINGS_FILE = 'settings.json';
/** Most recent vaults remembered; the oldest is forgotten first. */
const RECENT_MAX = 50;

/** A remembered vault folder. Only where the vault is: never a name from inside it. */
export interface RecentEntry {
  readonly id: string;
  readonly dir: string;
  readonly lastOpenedAt: number;
  readonly missing: boolean;
}

const storedSchema = z.strictObject({
  version: z.literal(1),
  // Files written before a setting existed lack it: its default fills in rather than the file counting as damaged.
  settings: z.extend(settingsSchema, {
    reduceMotion: z._default(z.boolean(), DEFAULT_SETTINGS.reduceMotion),
    lockOnClose: z._default(z.boolean(), DEFAULT_SETTINGS.lockOnClose),
    lockOnSuspend: z._default(z.boolean(), DEFAULT_SETTINGS.lockOnSuspend),
    lockOnScreenLock: z._default(z.boolean(), DEFAULT_SETTINGS.lockOnScreenLock),
    contentProtection: z._default(z.boolean(), DEFAULT_SETTINGS.contentProtection),
    openCopyNoticeShown: z._default(z.boolean(), DEFAULT_SETTINGS.openCopyNoticeShown),
  }),
  recent: z
    .array(
      z.strictObject({
        id: z.string().check(z.minLength(1), z.maxLength(128)),
        dir: z.string().check(z.minLength(1), z.maxLength(32_768)),
        lastOpenedAt: z.number().check(z.minimum(0)),
        missing: z.boolean(),
      }),
    )
    .check(z.maxLength(RECENT_MAX)),
});
type Stored = z.output<typeof storedSchema>;

function parseStored(text: string): Stored | undefined {
  try {
    const parsed = storedSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined; // not JSON
  }
}

/**
 * The app's settings and recent vaults, in one JSON file in the app's data folder, written atomically (temp file,
 * fsync, rename). A file that does not parse or validate is set aside (renamed, not deleted: the user may want
 * their list back) and replaced by defaults; {@link SettingsStore.problem} says so.
 */
export class SettingsStore {
  readonly #path: string;
  #state: Stored;
  /** Why the stored file was not used, when it was damaged. */
  readonly problem: string | undefined;

  private constructor(path: string, state: Stored, problem: string | undefined) {
    this.#path = path;
    this.#state = state;
    this.problem = problem;
  }

  /**
   * Reads the settings from `dataDir`, creating the folder (private to the user) when it is missing.
   * @throws the file system's error when the folder cannot be made or read.
   */
  static async load(dataDir: string): Promise<SettingsStore> {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    const path = join(dataDir, SETTINGS_FILE);
    const defaults: Stored = { version: 1, settings: DEFAULT_SETTINGS, recent: [] };
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT')
        return new SettingsStore(path, defaults, undefined);
      throw error;
    }
    const parsed = parseStored(text);
    if (parsed) return new SettingsStore(path, parsed, undefined);
    const aside = `${path}.damaged-${Date.now()}`;
    await rename(path, aside);
    return new SettingsStore(
      path,
      defaults,
      `The settings file was damaged, so the default settings and an empty list of recent vaults are used. The damaged file was kept as "${aside}".`,
    );
  }

  get settings(): Settings {
    return this.#state.settings;
  }

  updateSettings(change: Partial<Settings>): Settings {
    // A key given as undefined changes nothing (the schema's partial() lets one through, and IPC can carry it).
    const given = Object.entries(change as Record<string, unknown>).filter(
      ([, value]) => value !== undefined,
    );
    const settings: Settings = {
      ...this.#state.settings,
      ...(Object.fromEntries(given) as Partial<Settings>),
    };
    this.#save({ ...this.#state, settings });
    return settings;
  }

  /** Most recently opened first. */
  get recent(): readonly RecentEntry[] {
    return [...this.#state.recent].sort((a, b) => b.lastOpenedAt - a.lastOpenedAt);
  }

  /** @throws {@link InvalidArgumentError} for an id that is not in the list. */
  recentEntry(id: string): RecentEntry {
    const entry = this.#state.recent.find((recent) => recent.id === id);
    if (!entry) throw new InvalidArgumentError('That vault is not in the list of recent vaults.');
    return entry;
  }

  /** Puts a vault folder at the top of the list (adding it if new); returns its entry. */
  remember(dir: string, now = Date.now()): RecentEntry {
    const existing = this.#state.recent.find((recent) => recent.dir === dir);
    const entry: RecentEntry = {
      id: existing?.id ?? `r-${randomBytes(12).toString('hex')}`,
      dir,
      lastOpenedAt: now,
      missing: false,
    };
    const others = this.#state.recent.filter((recent) => recent.dir !== dir);
    const kept = others.sort((a, b) => b.lastOpenedAt - a.lastOpenedAt).slice(0, RECENT_MAX - 1);
    this.#save({ ...this.#state, recent: [entry, ...kept] });
    return entry;
  }

  forget(id: string): void {
    this.recentEntry(id);
    this.#save({ ...this.#state, recent: this.#state.recent.filter((recent) => recent.id !== id) });
  }

  setMissing(id: string, missing: boolean): RecentEntry {
    const entry = { ...this.recentEntry(id), missing };
    if (entry.missing !== this.recentEntry(id).missing) {
      this.#save({
        ...this.#state,
        recent: this.#state.recent.map((recent) => (recent.id === id ? entry : recent)),
      });
    }
    return entry;
  }

  #save(state: Stored): void {
    writeFileAtomic(this.#path, Buffer.from(`${JSON.stringify(state, null, 2)}\n`, 'utf8'));
    this.#state = state;
  }
}

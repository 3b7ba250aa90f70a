/**
 * Fails if the desktop app's hardening is loosened: the window's web preferences, the CSP, and the packaged
 * app's Electron fuses and ASAR. The packaging configs are read through electron-builder's own loader (which
 * resolves `extends`) and checked against its schema, so this is what a real `electron-builder` run would use.
 */
import { createRequire } from 'node:module';

import { describe, expect, it } from 'vitest';

import { CONTENT_SECURITY_POLICY, windowOptions } from '../../electron/main/window-options.js';

interface BuilderConfig {
  asar?: boolean;
  electronFuses?: Record<string, boolean>;
  linux?: { target?: string[] };
  mac?: { target?: string[] };
  win?: { target?: string[] };
  /** As electron-builder normalises it: a list of `{ filter }` sets. */
  files?: (string | { filter: string[] })[];
  directories?: { output?: string };
  extends?: string | null;
}
const builderRequire = createRequire(createRequire(import.meta.url).resolve('electron-builder'));
const builderConfig = builderRequire('app-builder-lib/out/util/config/config') as {
  getConfig: (projectDir: string, configPath: string, options: null) => Promise<BuilderConfig>;
  validateConfiguration: (config: BuilderConfig, logger: unknown) => Promise<void>;
};
const { DebugLogger } = builderRequire('builder-util') as { DebugLogger: new (enabled: boolean) => unknown };

async function loadBuilderConfig(file: string): Promise<BuilderConfig> {
  const config = await builderConfig.getConfig(process.cwd(), file, null);
  await builderConfig.validateConfiguration(config, new DebugLogger(false));
  return config;
}

const RELEASE_FUSES = {
  runAsNode: false,
  enableCookieEncryption: true,
  enableNodeOptionsEnvironmentVariable: false,
  enableNodeCliInspectArguments: false,
  enableEmbeddedAsarIntegrityValidation: true,
  onlyLoadAppFromAsar: true,
  grantFileProtocolExtraPrivileges: false,
};

/** A common laptop screen's work area (1366 × 768 less a panel). */
const LAPTOP = { width: 1366, height: 740 };

describe('the window', () => {
  it("opens wide enough for the toolbar's words, within the screen's work area and the least size allowed", () => {
    const size = (workArea: { width: number; height: number }) => {
      const { width, height, minWidth, minHeight } = windowOptions('/p', { devTools: false, workArea });
      return { width, height, minWidth, minHeight };
    };
    expect(size(LAPTOP)).toEqual({ width: 1280, height: 740, minWidth: 720, minHeight: 480 });
    expect(size({ width: 2560, height: 1400 })).toMatchObject({ width: 1280, height: 800 });
    expect(size({ width: 1024, height: 600 })).toMatchObject({ width: 1024, height: 600 });
    expect(size({ width: 640, height: 400 })).toMatchObject({ width: 720, height: 480 });
  });

  for (const devTools of [false, true]) {
    it(`isolates, sandboxes and denies Node to the renderer (devTools ${devTools})`, () => {
      const options = windowOptions('/app/out/preload/index.cjs', { devTools, workArea: LAPTOP });
      expect(options.webPreferences).toMatchObject({
        preload: '/app/out/preload/index.cjs',
        contextIsolation: true,
        sandbox: true,
        nodeIntegration: false,
        nodeIntegrationInWorker: false,
        nodeIntegrationInSubFrames: false,
        webSecurity: true,
        allowRunningInsecureContent: false,
        experimentalFeatures: false,
        webviewTag: false,
        navigateOnDragDrop: false,
      });
      expect(options.webPreferences).not.toHaveProperty('enableBlinkFeatures');
      expect(options.webPreferences).not.toHaveProperty('additionalArguments');
    });
  }

  it('sends a CSP that allows only its own scripts and workers: nothing inline, evaluated or remote', () => {
    const directives = new Map(
      CONTENT_SECURITY_POLICY.split(';').map((part) => {
        const [name = '', ...values] = part.trim().split(/\s+/);
        return [name, values];
      }),
    );
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(directives.get('worker-src')).toEqual(["'self'"]);
    expect(directives.get('object-src')).toEqual(["'none'"]);
    expect(directives.get('base-uri')).toEqual(["'none'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    expect(directives.get('connect-src')).toEqual(["'none'"]);
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-|\*|https?:/);
  });
});

describe('the packaged app', () => {
  it('ships in an ASAR with every fuse set for release', async () => {
    const config = await loadBuilderConfig('electron-builder.json');
    expect(config.asar).toBe(true);
    expect(config.electronFuses).toEqual(RELEASE_FUSES);
  });

  it('builds AppImage and deb, dmg, and nsis from the built bundles only', async () => {
    const config = await loadBuilderConfig('electron-builder.json');
    expect(config.linux?.target).toEqual(['AppImage', 'deb']);
    expect(config.mac?.target).toEqual(['dmg']);
    expect(config.win?.target).toEqual(['nsis']);
    const patterns = (config.files ?? []).flatMap((set) => (typeof set === 'string' ? [set] : set.filter));
    expect(patterns).toEqual(expect.arrayContaining(['out/main/**', 'out/preload/**', 'out/renderer/**']));
    expect(patterns.some((pattern) => pattern.startsWith('src') || pattern.includes('out/native'))).toBe(
      false,
    );
  });

  it('differs in the end-to-end build by the inspect fuse (Playwright needs it) and its output folder alone', async () => {
    const release = await loadBuilderConfig('electron-builder.json');
    const config = await loadBuilderConfig('electron-builder.e2e.json');
    expect(config.electronFuses).toEqual({ ...RELEASE_FUSES, enableNodeCliInspectArguments: true });
    expect(config.directories?.output).toBe('release-e2e');
    const { extends: base, electronFuses, directories, ...rest } = config;
    expect(base).toBe('./electron-builder.json');
    expect({
      ...rest,
      electronFuses: { ...electronFuses, enableNodeCliInspectArguments: false },
      directories: { ...directories, output: release.directories?.output },
    }).toEqual(release);
  });
});

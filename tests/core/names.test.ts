import path from 'node:path';

import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';

import { InvalidArgumentError, InvalidNameError, type InvalidNameReason } from '../../src/core/errors.js';
import {
  checkName,
  destinationPath,
  formatVaultPath,
  isPlainName,
  MAX_NAME_BYTES,
  nameViolation,
  parseVaultPath,
} from '../../src/core/names.js';

function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw, but the call returned');
}

function expectInvalidName(fn: () => unknown, reason: InvalidNameReason): InvalidNameError {
  const error = thrownBy(fn);
  expect(error).toBeInstanceOf(InvalidNameError);
  expect((error as InvalidNameError).reason).toBe(reason);
  expect((error as InvalidNameError).code).toBe('INVALID_NAME');
  return error as InvalidNameError;
}

const utf8 = (s: string): number => Buffer.byteLength(s, 'utf8');

const storableName = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).filter((name) => {
  try {
    checkName(name);
    return true;
  } catch {
    return false;
  }
});

describe('checkName', () => {
  it.for<[string, InvalidNameReason]>([
    ['', 'empty'],

    ['.', 'dot'],
    ['..', 'dot'],

    ['a/b', 'separator'],
    ['a\\b', 'separator'],
    ['/', 'separator'],
    ['\\', 'separator'],
    ['../etc', 'separator'],
    ['..\\..\\Windows', 'separator'],
    ['trailing/', 'separator'],

    ['a\u0000b', 'nul'],
    ['\u0000', 'nul'],
    ['x.txt\u0000.jpg', 'nul'],
    // NUL outranks everything after "empty": it truncates the name in C-based file-system calls.
    ['a/b\u0000', 'nul'],
    ['\u0000\u0007', 'nul'],

    ['\u0007bell', 'control'],
    ['tab\there', 'control'],
    ['line\nbreak', 'control'],
    ['cr\r', 'control'],
    ['\u0001', 'control'],
    ['unit\u001fseparator', 'control'],
    ['del\u007f', 'control'],
    ['\u001b[31mred', 'control'],

    ['a'.repeat(256), 'too-long'],
    ['é'.repeat(128), 'too-long'],
    ['€'.repeat(86), 'too-long'],
    ['😀'.repeat(64), 'too-long'],
    [`${'a'.repeat(254)}é`, 'too-long'],
    // 128 decomposed é: 256 code units as given, still 256 bytes once composed.
    ['e\u0301'.repeat(128), 'too-long'],

    ['CON', 'windows-reserved'],
    ['con', 'windows-reserved'],
    ['con.txt', 'windows-reserved'],
    ['Con.TXT', 'windows-reserved'],
    ['PRN', 'windows-reserved'],
    ['aux.tar.gz', 'windows-reserved'],
    ['NUL', 'windows-reserved'],
    ['nul.log', 'windows-reserved'],
    ['Com1', 'windows-reserved'],
    ['COM9.dat', 'windows-reserved'],
    ['LPT1', 'windows-reserved'],
    ['LPT9.log', 'windows-reserved'],
    ['COM¹', 'windows-reserved'],
    ['com².txt', 'windows-reserved'],
    ['LPT³', 'windows-reserved'],
    ['CON .txt', 'windows-reserved'],
    // A reserved device name outranks the trailing dot: Windows strips the dot and still finds CON.
    ['CON.', 'windows-reserved'],
    ['x:y', 'windows-reserved'],
    ['C:', 'windows-reserved'],
    ['notes.txt:hidden-stream', 'windows-reserved'],
    ['what?', 'windows-reserved'],
    ['*.jpg', 'windows-reserved'],
    ['a<b', 'windows-reserved'],
    ['a>b', 'windows-reserved'],
    ['say "hi"', 'windows-reserved'],
    ['a|b', 'windows-reserved'],

    ['name.', 'trailing-dot-or-space'],
    ['name ', 'trailing-dot-or-space'],
    ['report.pdf.', 'trailing-dot-or-space'],
    ['a. ', 'trailing-dot-or-space'],
    [' ', 'trailing-dot-or-space'],
    // Linux and macOS accept "...", but Windows strips trailing dots, so it could not be restored there.
    ['...', 'trailing-dot-or-space'],
  ])('rejects %j as %s', ([name, reason]) => {
    expectInvalidName(() => checkName(name), reason);
  });

  it('counts UTF-8 bytes, not code units', () => {
    for (const name of ['é'.repeat(128), '€'.repeat(86), '😀'.repeat(64), `${'a'.repeat(254)}é`]) {
      expect(name.length).toBeLessThanOrEqual(MAX_NAME_BYTES);
      expect(utf8(name)).toBeGreaterThan(MAX_NAME_BYTES);
    }
  });

  it.for([
    '.hidden',
    '.con',
    'a',
    'a..b',
    'report.pdf',
    'archive.tar.gz',
    ' leading space',
    'no\u00a0break\u00a0',
    'Résumé.docx',
    '日本語のファイル.txt',
    'Ελληνικά',
    '😀 party.png',
    '👩‍👩‍👧 family',
    'CONSOLE.txt',
    'CONX',
    'xCON',
    'con-fig',
    'AUX1',
    'com10',
    'LPT',
    'COM',
    // FORMAT.md 8.3: only 1-9 and the superscripts after COM/LPT; a prefix or suffix makes another stem.
    'COM0',
    'lpt0.txt',
    'xNUL',
    // C1 controls and format or invisible characters are allowed (only C0 and DEL are control characters here).
    'a\u0085b',
    '\u009fname',
    'left\u200eright',
    'zero\u200bwidth',
    'a'.repeat(MAX_NAME_BYTES),
    `${'é'.repeat(127)}a`,
    '€'.repeat(85),
    `${'😀'.repeat(63)}abc`,
  ])('accepts %j', (name) => {
    expect(utf8(name)).toBeLessThanOrEqual(MAX_NAME_BYTES);
    expect(checkName(name)).toBe(name);
  });

  it('returns the NFC form of decomposed (macOS) input', () => {
    expect(checkName('Re\u0301sume\u0301.txt')).toBe('R\u00e9sum\u00e9.txt');
    expect(checkName('\u1112\u1161\u11ab')).toBe('\ud55c');
    expect(checkName('\u212b')).toBe('\u00c5');
  });

  it('measures the length after NFC, the form that is stored', () => {
    const decomposed = 'e\u0301'.repeat(127);
    expect(utf8(decomposed)).toBeGreaterThan(MAX_NAME_BYTES);
    expect(checkName(decomposed)).toBe('\u00e9'.repeat(127));
  });

  it('refuses strings that are not well-formed Unicode as a programming error', () => {
    for (const name of ['\ud800', 'a\udfffb', '\ude00\ud83d']) {
      expect(thrownBy(() => checkName(name))).toBeInstanceOf(InvalidArgumentError);
    }
    expect(checkName('\ud83d\ude00')).toBe('😀');
  });

  it('says what is wrong and what to do', () => {
    expect(expectInvalidName(() => checkName('CON.txt'), 'windows-reserved').message).toBe(
      '"CON.txt" cannot be stored: it is a reserved device name on Windows. Rename it and add it again.',
    );
    expect(expectInvalidName(() => checkName('what?'), 'windows-reserved').message).toBe(
      '"what?" cannot be stored: it contains "?", which Windows does not allow in names. Rename it and add it again.',
    );
    expect(expectInvalidName(() => checkName(''), 'empty').message).toMatch(
      /^An empty name cannot be stored/,
    );
    expect(expectInvalidName(() => checkName('a'.repeat(300)), 'too-long').message).toMatch(
      /300 bytes .* limit is 255.*Shorten it/,
    );
  });

  it('never puts invisible or overlong text into a message', () => {
    const bell = expectInvalidName(() => checkName('\u0007bell'), 'control').message;
    expect(bell).toContain('"<U+0007>bell"');
    expect(bell).not.toContain('\u0007');
    const nul = expectInvalidName(() => checkName('a\u0000b'), 'nul').message;
    expect(nul).not.toContain('\u0000');
    const spoof = expectInvalidName(() => checkName('invoice\u202etxt.exe?'), 'windows-reserved').message;
    expect(spoof).toContain('<U+202E>');
    const long = expectInvalidName(() => checkName('x'.repeat(10_000)), 'too-long').message;
    expect(long.length).toBeLessThan(400);
  });
});

describe('the plain-name fast path', () => {
  // Short strings over printable ASCII, weighted towards the characters and shapes the rules care about.
  const asciiName = fc.oneof(
    fc.string({ unit: fc.constantFrom(...' .aZ0_-<>:"|?*/\\~'.split('')), maxLength: 8 }),
    fc.string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      maxLength: 12,
    }),
    fc
      .tuple(
        fc.constantFrom('con', 'CON', 'Aux', 'nul', 'com1', 'LPT9', 'comet', 'prnt'),
        fc.string({ maxLength: 5 }),
      )
      .map(([stem, rest]) => stem + rest),
    fc.string({ minLength: 250, maxLength: 260 }),
  );

  test.prop([asciiName], { numRuns: 5000 })(
    'only skips the full check for names that break no rule',
    (name) => {
      if (isPlainName(name)) expect(nameViolation(name)).toBeUndefined();
    },
  );

  it.for(['photo.jpg', 'Report (final) 2024.pdf', "it's ok.tar.gz", 'a', '.bashrc', 'x'.repeat(255)])(
    'takes common names %j without the full check',
    (name) => {
      expect(isPlainName(name)).toBe(true);
      expect(checkName(name)).toBe(name);
    },
  );

  it.for(['', '.', '..', 'a.', 'a ', 'con.txt', 'a:b', 'x'.repeat(256), 'café'])(
    'sends %j to the full check',
    (name) => {
      expect(isPlainName(name)).toBe(false);
    },
  );
});

describe('vault paths', () => {
  it.for<[string, string[]]>([
    ['', []],
    ['/', []],
    ['/a', ['a']],
    ['/a/b', ['a', 'b']],
    ['/a/b/', ['a', 'b']],
    ['/Photos/2024/IMG 0001.jpg', ['Photos', '2024', 'IMG 0001.jpg']],
    ['/.config/app', ['.config', 'app']],
  ])('parses %j', ([vaultPath, parts]) => {
    expect(parseVaultPath(vaultPath)).toEqual(parts);
  });

  it('parses into NFC names', () => {
    expect(parseVaultPath('/Re\u0301sume\u0301/cafe\u0301.txt')).toEqual([
      'R\u00e9sum\u00e9',
      'caf\u00e9.txt',
    ]);
  });

  it.for(['a', 'a/b', './a', '../a', '~/a', '\\a', 'C:\\a'])('refuses the relative path %j', (vaultPath) => {
    expect(thrownBy(() => parseVaultPath(vaultPath))).toBeInstanceOf(InvalidArgumentError);
  });

  it.for(['//', '//a', '/a//b', '/a//', '/a/b//', '///'])(
    'refuses the empty component in %j',
    (vaultPath) => {
      expect(thrownBy(() => parseVaultPath(vaultPath))).toBeInstanceOf(InvalidArgumentError);
    },
  );

  it.for<[string, InvalidNameReason]>([
    ['/a/../b', 'dot'],
    ['/a/./b', 'dot'],
    ['/..', 'dot'],
    ['/a\\b', 'separator'],
    ['/a\u0000', 'nul'],
    ['/tab\t', 'control'],
    [`/${'a'.repeat(256)}`, 'too-long'],
    ['/CON/x', 'windows-reserved'],
    ['/x/what?', 'windows-reserved'],
    ['/folder./x', 'trailing-dot-or-space'],
  ])('refuses %j as %s', ([vaultPath, reason]) => {
    expectInvalidName(() => parseVaultPath(vaultPath), reason);
  });

  it.for<[string[], string]>([
    [[], '/'],
    [['a'], '/a'],
    [['a', 'b'], '/a/b'],
    [['Photos', 'IMG 0001.jpg'], '/Photos/IMG 0001.jpg'],
    [['cafe\u0301'], '/caf\u00e9'],
  ])('formats %j as %j', ([parts, vaultPath]) => {
    expect(formatVaultPath(parts)).toBe(vaultPath);
  });

  it.for<[string[], InvalidNameReason]>([
    [[''], 'empty'],
    [['a', ''], 'empty'],
    [['..'], 'dot'],
    [['a/b'], 'separator'],
    [['a', 'b\\c'], 'separator'],
    [['CON'], 'windows-reserved'],
  ])('refuses to format %j (%s): the path would not parse back into the same names', ([parts, reason]) => {
    expectInvalidName(() => formatVaultPath(parts), reason);
  });

  test.prop([fc.array(storableName, { maxLength: 6 })], { numRuns: 500 })(
    'round-trips every list of storable names',
    (parts) => {
      const nfc = parts.map((part) => part.normalize('NFC'));
      const vaultPath = formatVaultPath(parts);
      expect(parseVaultPath(vaultPath)).toEqual(nfc);
      expect(formatVaultPath(parseVaultPath(vaultPath))).toBe(vaultPath);
      expect(parseVaultPath(vaultPath === '/' ? '/' : `${vaultPath}/`)).toEqual(nfc);
    },
  );
});

describe('destinationPath', () => {
  const dest = path.resolve('restore-target');

  it('joins checked names onto the resolved destination', () => {
    expect(destinationPath(dest, ['a'])).toBe(path.join(dest, 'a'));
    expect(destinationPath(dest, ['Photos', '2024', 'IMG 0001.jpg'])).toBe(
      path.join(dest, 'Photos', '2024', 'IMG 0001.jpg'),
    );
    expect(destinationPath('restore-target', ['a'])).toBe(path.join(dest, 'a'));
    expect(destinationPath(`${dest}${path.sep}`, ['a'])).toBe(path.join(dest, 'a'));
  });

  it('writes names in NFC', () => {
    expect(destinationPath(dest, ['cafe\u0301', 'Re\u0301sume\u0301.txt'])).toBe(
      path.join(dest, 'caf\u00e9', 'R\u00e9sum\u00e9.txt'),
    );
  });

  it('restores directly under a file-system root', () => {
    const root = path.parse(dest).root;
    expect(destinationPath(root, ['a', 'b'])).toBe(path.join(root, 'a', 'b'));
  });

  it.for<[string[], InvalidNameReason]>([
    [['..'], 'dot'],
    [['a', '..', '..', 'etc'], 'dot'],
    [['.'], 'dot'],
    [['../outside'], 'separator'],
    [['..\\outside'], 'separator'],
    [['/etc/passwd'], 'separator'],
    [['a', 'b/../../..'], 'separator'],
    [[''], 'empty'],
    [['a\u0000.txt'], 'nul'],
    [['evil\n'], 'control'],
    [['x'.repeat(MAX_NAME_BYTES + 1)], 'too-long'],
    [['CON'], 'windows-reserved'],
    [['C:'], 'windows-reserved'],
    [['name.'], 'trailing-dot-or-space'],
  ])('re-checks names from the index: refuses %j (%s)', ([parts, reason]) => {
    const error = expectInvalidName(() => destinationPath(dest, parts), reason);
    expect(error.message).toContain('cannot be restored');
    expect(error.message).not.toContain('add it again');
  });

  it('refuses an empty list, which would name the destination itself', () => {
    expect(thrownBy(() => destinationPath(dest, []))).toBeInstanceOf(InvalidArgumentError);
  });

  test.prop([fc.array(storableName, { minLength: 1, maxLength: 5 })], { numRuns: 300 })(
    'always lands strictly inside the destination',
    (parts) => {
      const relative = path.relative(dest, destinationPath(dest, parts));
      expect(relative).not.toBe('');
      expect(relative.startsWith('..')).toBe(false);
      expect(path.isAbsolute(relative)).toBe(false);
      expect(relative.split(path.sep)).toEqual(parts.map((part) => part.normalize('NFC')));
    },
  );
});

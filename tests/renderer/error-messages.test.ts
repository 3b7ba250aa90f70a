import { describe, expect, it } from 'vitest';

import { ApiError, describeError } from '../../src/renderer/api.js';
import { ERROR_WORDS } from '../../src/renderer/error-messages.js';
import { ERROR_CODES } from '../../src/shared/error-codes.js';

describe("the window's error messages", () => {
  it('give every engine error code a message and a next step', () => {
    for (const code of [...ERROR_CODES, 'NOT_SUPPORTED', 'INTERNAL'] as const) {
      expect(ERROR_WORDS[code].message, code).toMatch(/\S/);
      expect(ERROR_WORDS[code].next, code).toMatch(/\S/);
    }
  });

  it('say what happened and what to do for the three ways opening a vault fails', () => {
    expect(describeError(new ApiError('NOT_A_VAULT', 'x'))).toContain('not a Coffer vault');
    expect(describeError(new ApiError('UNSUPPORTED_FORMAT', 'x'))).toContain('newer version of Coffer');
    expect(describeError(new ApiError('VAULT_IN_USE', 'x'))).toContain('in use by another window or program');
  });

  it('name every rule a name breaks when it cannot be used, not only "/" and the length', () => {
    // The window gets the code alone; the engine refuses each of these names for a reason of its own.
    const shown = describeError(new ApiError('INVALID_NAME', 'x'));
    const rules = ['"."', '".."', ...'/ \\ < > : " | ? *'.split(' '), 'dot or a space', 'CON', '255'];
    for (const rule of rules) expect(shown, rule).toContain(rule);
  });

  it('never show an exception’s own text or stack', () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'vaultId')");
    const shown = describeError(bug);
    expect(shown).not.toContain('vaultId');
    expect(shown).not.toContain(' at ');
    expect(shown).toBe(`${ERROR_WORDS.INTERNAL.message} ${ERROR_WORDS.INTERNAL.next}`);
    expect(
      describeError(new ApiError('IO', 'EACCES: open /secret/path\n    at Object.openSync')),
    ).not.toMatch(/EACCES|openSync/);
  });
});

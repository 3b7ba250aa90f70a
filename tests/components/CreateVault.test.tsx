// @vitest-environment jsdom
import './dom.js';

import { act, render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';

import { installApi } from '../../src/renderer/api.js';
import { CreateVault } from '../../src/renderer/components/CreateVault.js';
import { errorSentence } from '../../src/renderer/error-messages.js';
import { useCoffer } from '../../src/renderer/store.js';
import type { VaultSummary } from '../../src/shared/contract.js';
import { fakeApi, Refusal, type FakeApi, type Handlers } from './fake-api.js';
import { requests, settle } from './fixtures.js';

const created: VaultSummary = {
  vaultId: 'v-new',
  recentId: 'r-new',
  name: 'Personal',
  location: '/home/ana/Vaults/Personal',
  locked: false,
  readOnly: false,
  headerOlderThanData: false,
};

/** What this computer took to derive a key at each preset, as the back end measures it (ms). */
const measured = { interactive: 400, moderate: 1500, sensitive: 6000 };

function showForm(handlers: Handlers): FakeApi {
  const api = fakeApi({
    'app.kdfEstimate': () => measured,
    'dialog.pickFolder': () => ({ handle: 'folder-1', label: '/home/ana/Vaults', count: 1 }),
    'vault.create': () => created,
    ...handlers,
  });
  installApi(api);
  render(<CreateVault onCancel={() => undefined} />);
  return api;
}

async function fill({ name, passphrase, repeat }: { name: string; passphrase: string; repeat: string }) {
  await userEvent.click(screen.getByRole('button', { name: 'Choose…' }));
  await screen.findByText('/home/ana/Vaults');
  await userEvent.type(screen.getByRole('textbox', { name: 'Name' }), name);
  await userEvent.type(screen.getByLabelText('Passphrase'), passphrase);
  await userEvent.type(screen.getByLabelText('Repeat passphrase'), repeat);
}

/** The text of the elements that describe `element` (its accessible description, without a library for it). */
const description = (element: HTMLElement) =>
  (element.getAttribute('aria-describedby') ?? '')
    .split(' ')
    .map((id) => document.getElementById(id)?.textContent ?? '')
    .join(' ');

const createButton = () => screen.getByRole('button', { name: /^(Create vault|Creating…)$/ });

beforeEach(() => {
  useCoffer.setState({ vault: null });
});

describe('creating a vault', () => {
  it('sends the folder, the trimmed name, the passphrase and the chosen settings, then shows the vault', async () => {
    const api = showForm({});
    await fill({ name: '  Personal ', passphrase: 'velvet tundra quarry', repeat: 'velvet tundra quarry' });
    await userEvent.selectOptions(screen.getByRole('combobox', { name: 'Key strength' }), 'sensitive');
    await userEvent.click(screen.getByRole('checkbox', { name: 'Hide each file’s exact size' }));
    await userEvent.click(createButton());
    await settle();
    expect(requests(api, 'dialog.pickFolder')).toEqual([{ purpose: 'create-vault' }]);
    expect(requests(api, 'vault.create')).toEqual([
      {
        folder: 'folder-1',
        name: 'Personal',
        passphrase: 'velvet tundra quarry',
        kdf: 'sensitive',
        contentPadding: 'none',
      },
    ]);
    // App shows whatever vault the store holds: the new vault's browser replaces this form.
    expect(useCoffer.getState().vault).toEqual(created);
  });

  it('pads stored sizes and uses the standard key strength unless told otherwise', async () => {
    const api = showForm({});
    expect(
      screen.getByRole<HTMLInputElement>('checkbox', { name: 'Hide each file’s exact size' }).checked,
    ).toBe(true);
    await fill({ name: 'Personal', passphrase: 'velvet tundra quarry', repeat: 'velvet tundra quarry' });
    await userEvent.click(createButton());
    await settle();
    expect(requests(api, 'vault.create')).toMatchObject([{ kdf: 'moderate', contentPadding: 'padme' }]);
  });

  it('asks once before keeping a passphrase that is easy to guess: a second press creates the vault', async () => {
    const api = showForm({});
    await screen.findByText(/^Four or more unrelated words/);
    await fill({ name: 'Personal', passphrase: 'password', repeat: 'password' });
    await userEvent.click(createButton());
    await settle();
    expect(screen.getByRole('alert').textContent).toMatch(
      /^This passphrase is easy to guess: .* again to use it anyway\.$/,
    );
    expect(document.activeElement).toBe(screen.getByLabelText('Passphrase', { selector: 'input' }));
    expect(requests(api, 'vault.create')).toEqual([]);
    await userEvent.click(createButton());
    await settle();
    expect(requests(api, 'vault.create')).toMatchObject([{ passphrase: 'password' }]);
  });

  it('takes an error about a field back once that field is edited, not when another is', async () => {
    showForm({});
    await fill({ name: 'Personal', passphrase: 'velvet tundra quarry', repeat: 'velvet tundra quary' });
    await userEvent.click(createButton());
    const repeat = screen.getByLabelText('Repeat passphrase', { selector: 'input' });
    expect(repeat.getAttribute('aria-invalid')).toBe('true');
    await userEvent.type(screen.getByRole('textbox', { name: 'Name' }), 's');
    expect(screen.getByRole('alert').textContent).toBe('The two passphrases differ. Type them again.');
    await userEvent.type(repeat, 'r');
    expect(screen.queryByRole('alert')).toBeNull();
    expect(repeat.hasAttribute('aria-invalid')).toBe(false);
    expect(repeat.getAttribute('aria-describedby') ?? '').toBe('');
  });

  it('refuses two different passphrases, saying so, and creates nothing', async () => {
    const api = showForm({});
    await fill({ name: 'Personal', passphrase: 'velvet tundra quarry', repeat: 'velvet tundra quary' });
    await userEvent.click(createButton());
    await settle();
    expect(screen.getByRole('alert').textContent).toBe('The two passphrases differ. Type them again.');
    expect(document.activeElement).toBe(screen.getByLabelText('Repeat passphrase', { selector: 'input' }));
    expect(requests(api, 'vault.create')).toEqual([]);
  });

  it('says what is missing: the folder first, then a name that is more than spaces, then a passphrase; the keyboard goes to the field at fault, which the error describes', async () => {
    const api = showForm({});
    const choose = screen.getByRole('button', { name: 'Choose…' });
    const nameField = screen.getByRole('textbox', { name: 'Name' });
    const passphraseField = screen.getByLabelText('Passphrase', { selector: 'input' });
    await userEvent.click(createButton());
    const alert = () => screen.getByRole('alert');
    expect(alert().textContent).toBe('Choose the folder to create the vault in.');
    expect(document.activeElement).toBe(choose);
    expect(choose.getAttribute('aria-describedby')).toBe(alert().id);
    await userEvent.click(choose);
    await screen.findByText('/home/ana/Vaults');
    await userEvent.type(nameField, '   ');
    await userEvent.click(createButton());
    expect(alert().textContent).toBe('Give the vault a name.');
    expect(document.activeElement).toBe(nameField);
    expect(nameField.getAttribute('aria-invalid')).toBe('true');
    expect(nameField.getAttribute('aria-describedby')).toBe(alert().id);
    await userEvent.type(nameField, 'Personal');
    await userEvent.click(createButton());
    expect(alert().textContent).toBe('Choose a passphrase.');
    expect(document.activeElement).toBe(passphraseField);
    expect(passphraseField.getAttribute('aria-invalid')).toBe('true');
    expect(passphraseField.getAttribute('aria-describedby')?.split(' ')).toContain(alert().id);
    expect(nameField.hasAttribute('aria-invalid')).toBe(false);
    await settle();
    expect(requests(api, 'vault.create')).toEqual([]);
  });

  it('keeps the chosen folder when the folder dialog is cancelled later', async () => {
    const picks = [{ handle: 'folder-1', label: '/home/ana/Vaults', count: 1 }, null];
    showForm({ 'dialog.pickFolder': () => picks.shift() ?? null });
    expect(screen.getByText('No folder chosen')).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: 'Choose…' }));
    await screen.findByText('/home/ana/Vaults');
    await userEvent.click(screen.getByRole('button', { name: 'Choose…' }));
    await settle();
    expect(screen.getByText('/home/ana/Vaults')).toBeTruthy();
  });

  it('warns that a lost passphrase cannot be recovered, as the Create button’s description', () => {
    showForm({});
    expect(
      screen.getByRole('button', {
        name: 'Create vault',
        description: /^A lost passphrase cannot be recovered\./,
      }),
    ).toBeTruthy();
  });

  it('locks the form while the vault is being created', async () => {
    let finish: (vault: VaultSummary) => void = () => undefined;
    const api = showForm({
      'vault.create': () => new Promise<VaultSummary>((resolve) => (finish = resolve)),
    });
    await fill({ name: 'Personal', passphrase: 'velvet tundra quarry', repeat: 'velvet tundra quarry' });
    await userEvent.click(createButton());
    expect(createButton().textContent).toBe('Creating…');
    // Marked, not disabled, so the keyboard that pressed it stays on it; pressing again sends nothing more.
    expect(createButton().getAttribute('aria-disabled')).toBe('true');
    expect(document.activeElement).toBe(createButton());
    await userEvent.click(createButton());
    expect(requests(api, 'vault.create')).toHaveLength(1);
    for (const control of [
      screen.getByRole('button', { name: 'Cancel' }),
      screen.getByRole('button', { name: 'Choose…' }),
      screen.getByRole('textbox', { name: 'Name' }),
      screen.getByLabelText('Passphrase'),
      screen.getByLabelText('Repeat passphrase'),
      screen.getByRole('combobox', { name: 'Key strength' }),
      screen.getByRole('checkbox', { name: 'Hide each file’s exact size' }),
    ])
      expect(control.hasAttribute('disabled'), control.outerHTML).toBe(true);
    await act(async () => {
      finish(created);
      await Promise.resolve();
    });
    expect(useCoffer.getState().vault).toEqual(created);
  });

  it('says in words why the vault could not be created, and lets the person try again', async () => {
    let refuse = (): void => undefined;
    showForm({
      'vault.create': () =>
        new Promise((resolve) => {
          refuse = () => {
            resolve(new Refusal('ALREADY_EXISTS', 'EEXIST: coffer.header'));
          };
        }),
    });
    await fill({ name: 'Personal', passphrase: 'velvet tundra quarry', repeat: 'velvet tundra quarry' });
    // Sent with Enter from the field, which is then disabled: a browser drops its focus to the page (jsdom keeps
    // it on the disabled field, so the page is given it here, through an element that goes).
    await userEvent.keyboard('{Enter}');
    expect(createButton().textContent).toBe('Creating…');
    act(() => {
      const gone = document.body.appendChild(document.createElement('button'));
      gone.focus();
      gone.remove();
    });
    expect(document.activeElement).toBe(document.body);
    await act(async () => {
      refuse();
      await Promise.resolve();
    });
    expect((await screen.findByRole('alert')).textContent).toBe(errorSentence('ALREADY_EXISTS'));
    // Create takes the keyboard back, to try again.
    await waitFor(() => {
      expect(document.activeElement).toBe(createButton());
    });
    expect(createButton().getAttribute('aria-disabled')).toBe('false');
    expect(screen.getByLabelText<HTMLInputElement>('Passphrase').value).toBe('velvet tundra quarry');
    expect(useCoffer.getState().vault).toBeNull();
  });
});

describe('the key strength choice', () => {
  it('shows how long each preset takes to unlock on this computer, once measured', async () => {
    showForm({});
    const presets = screen.getByRole('combobox', { name: 'Key strength' });
    expect(
      await screen.findByRole('option', { name: 'Standard (256 MiB) — recommended · about 2 s' }),
    ).toBeTruthy();
    expect(
      screen.getByRole('option', { name: 'Fast (64 MiB) — for older computers · about 0.4 s' }),
    ).toBeTruthy();
    expect(
      screen.getByRole('option', { name: 'Strong (1 GiB) — slower to unlock · about 6 s' }),
    ).toBeTruthy();
    expect(screen.getByText(/^Unlocking will take about 2 s on this computer\./)).toBeTruthy();
    await userEvent.selectOptions(presets, 'interactive');
    expect(screen.getByText(/^Unlocking will take about 0\.4 s on this computer\./)).toBeTruthy();
  });

  it('does not claim to be measuring when the measurement failed', async () => {
    showForm({ 'app.kdfEstimate': () => new Refusal('CRYPTO_BACKEND') });
    const presets = screen.getByRole('combobox', { name: 'Key strength' });
    await settle();
    expect(screen.queryByText(/^Measuring/)).toBeNull();
    expect(screen.getByRole('option', { name: 'Standard (256 MiB) — recommended' })).toBeTruthy();
    expect(description(presets)).toBe(
      'Stronger settings make unlocking, and guessing the passphrase, slower.',
    );
  });

  it('can be chosen before the measurement arrives', async () => {
    showForm({ 'app.kdfEstimate': () => new Promise<typeof measured>(() => undefined) });
    expect(screen.getByText('Measuring how long unlocking takes on this computer…')).toBeTruthy();
    const presets = screen.getByRole<HTMLSelectElement>('combobox', { name: 'Key strength' });
    await userEvent.selectOptions(presets, 'Strong (1 GiB) — slower to unlock');
    expect(presets.value).toBe('sensitive');
  });
});

describe('the passphrase strength', () => {
  it('says it is loading, then advises before anything is typed', async () => {
    showForm({});
    expect(screen.getByText('Loading the strength check…')).toBeTruthy();
    expect(
      await screen.findByText('Four or more unrelated words make a strong passphrase that is easy to type.'),
    ).toBeTruthy();
  });

  it('rates a common password very weak, with advice, and a few unrelated words very strong', async () => {
    showForm({});
    await screen.findByText(/^Four or more unrelated words/);
    const passphrase = screen.getByLabelText('Passphrase');
    await userEvent.type(passphrase, 'password');
    expect(screen.getByRole('meter', { name: 'Passphrase strength' }).getAttribute('value')).toBe('0');
    expect(screen.getByText('Very weak')).toBeTruthy();
    expect(
      screen.getByText('This is a heavily used password. Add more words that are less common.'),
    ).toBeTruthy();
    await userEvent.clear(passphrase);
    await userEvent.type(passphrase, 'velvet tundra quarry');
    expect(screen.getByRole('meter', { name: 'Passphrase strength' }).getAttribute('value')).toBe('4');
    expect(screen.getByText('Very strong')).toBeTruthy();
  });

  it('counts the vault’s name as known to a guesser', async () => {
    showForm({});
    await screen.findByText(/^Four or more unrelated words/);
    await userEvent.type(screen.getByRole('textbox', { name: 'Name' }), 'velvet tundra quarry');
    await userEvent.type(screen.getByLabelText('Passphrase'), 'velvet tundra quarry');
    expect(screen.getByText('Very weak')).toBeTruthy();
    // In this window's words, not a web form's ("personal or page related data").
    expect(screen.getByText(/^Avoid the vault’s name and words about you\./)).toBeTruthy();
  });

  it('describes the passphrase field with the rating, so a screen reader hears it there', async () => {
    showForm({});
    await screen.findByText(/^Four or more unrelated words/);
    const passphrase = screen.getByLabelText('Passphrase');
    await userEvent.type(passphrase, 'password');
    expect(description(passphrase)).toContain('Very weak');
  });

  it('says so when the estimator cannot load, and still advises', async () => {
    // The estimator is its own chunk (a dynamic import); in a packaged app it can fail to load like any file.
    vi.doMock('../../src/renderer/strength.js', () => {
      throw new Error('chunk failed to load');
    });
    try {
      showForm({});
      expect(
        await screen.findByText('The strength check could not load. Prefer four or more unrelated words.'),
      ).toBeTruthy();
    } finally {
      vi.doUnmock('../../src/renderer/strength.js');
    }
  });
});

import { Eye, EyeOff, TriangleAlert } from 'lucide-react';
import { useId, useState, type KeyboardEvent, type Ref } from 'react';

interface PassphraseFieldProps {
  readonly label: string;
  readonly value: string;
  readonly onValue: (value: string) => void;
  readonly autoComplete: 'current-password' | 'new-password';
  readonly inputRef?: Ref<HTMLInputElement>;
  readonly autoFocus?: boolean;
  readonly disabled?: boolean;
  readonly invalid?: boolean;
  /** Ids of other elements that describe the field (an error, a strength meter). */
  readonly describedBy?: readonly string[];
}

/**
 * A passphrase input with a show/hide button and a Caps Lock warning: the two things that make a mistyped
 * passphrase visible before it costs a slow, failed unlock.
 */
export function PassphraseField(props: PassphraseFieldProps) {
  const {
    label,
    value,
    onValue,
    autoComplete,
    inputRef,
    autoFocus,
    disabled,
    invalid,
    describedBy = [],
  } = props;
  const id = useId();
  const capsId = `${id}-caps`;
  const labelId = `${id}-label`;
  const [shown, setShown] = useState(false);
  const [capsLock, setCapsLock] = useState(false);
  // The browser only tells the modifier state with a keyboard (or pointer) event, so it is read on each key.
  const readCapsLock = (event: KeyboardEvent<HTMLInputElement>): void => {
    setCapsLock(event.getModifierState('CapsLock'));
  };
  const described = [...describedBy, ...(capsLock ? [capsId] : [])];

  return (
    <div className="field">
      <label className="label" htmlFor={id} id={labelId}>
        {label}
      </label>
      <div className="passphrase-input">
        <input
          id={id}
          ref={inputRef}
          type={shown ? 'text' : 'password'}
          value={value}
          onChange={(event) => {
            onValue(event.target.value);
          }}
          onKeyDown={readCapsLock}
          onKeyUp={readCapsLock}
          onBlur={() => {
            setCapsLock(false);
          }}
          autoComplete={autoComplete}
          autoFocus={autoFocus}
          disabled={disabled}
          spellCheck={false}
          aria-invalid={invalid === true ? true : undefined}
          aria-describedby={described.length > 0 ? described.join(' ') : undefined}
        />
        <button
          type="button"
          className="icon-button reveal"
          // Its name leaves the field's label out, so the label names exactly one control (for tests too); the
          // description says which field it reveals.
          aria-label={shown ? 'Hide text' : 'Show text'}
          aria-describedby={labelId}
          title={shown ? 'Hide the passphrase' : 'Show the passphrase'}
          aria-pressed={shown}
          aria-controls={id}
          disabled={disabled}
          onClick={() => {
            setShown(!shown);
          }}
        >
          {shown ? <EyeOff size={16} aria-hidden="true" /> : <Eye size={16} aria-hidden="true" />}
        </button>
      </div>
      {capsLock && (
        <p className="caps-warning" id={capsId} role="status">
          <TriangleAlert size={14} aria-hidden="true" />
          Caps Lock is on.
        </p>
      )}
    </div>
  );
}

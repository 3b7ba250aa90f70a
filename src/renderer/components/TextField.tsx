import type { InputHTMLAttributes, Ref } from 'react';

interface TextFieldProps extends Omit<InputHTMLAttributes<HTMLInputElement>, 'onChange' | 'value'> {
  readonly label: string;
  readonly value: string;
  readonly onValue: (value: string) => void;
  readonly inputRef?: Ref<HTMLInputElement>;
}

/** A labelled text or password input: the label names the field for screen readers and tests alike. */
export function TextField({ label, value, onValue, inputRef, ...input }: TextFieldProps) {
  return (
    <label className="field">
      <span className="label">{label}</span>
      <input
        {...input}
        ref={inputRef}
        value={value}
        onChange={(event) => {
          onValue(event.target.value);
        }}
      />
    </label>
  );
}

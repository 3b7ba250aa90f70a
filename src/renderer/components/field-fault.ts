import { useState } from 'react';

/**
 * Which field of a form an error is about (it is marked invalid, described by the error, and given the keyboard
 * by the form), and the setter that takes a field's new value: editing the field at fault makes the error out of
 * date, so it goes (`clearError`).
 */
export function useFieldFault<Field extends string>(
  clearError: () => void,
): {
  fault: Field | null;
  setFault: (field: Field | null) => void;
  edited: (field: Field, set: (value: string) => void) => (value: string) => void;
} {
  const [fault, setFault] = useState<Field | null>(null);
  return {
    fault,
    setFault,
    edited: (field, set) => (value) => {
      set(value);
      if (fault !== field) return;
      setFault(null);
      clearError();
    },
  };
}

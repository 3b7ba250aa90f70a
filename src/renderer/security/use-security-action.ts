import { useCallback, useState } from 'react';

import { ApiError } from '../api.js';
import { securityErrorSentence, type SecurityAction } from '../error-messages.js';

/**
 * One Security-page action's busy state and error: `run` shows the error in words chosen for the action (see
 * SECURITY_ERROR_WORDS), tells `onRefused` the error's code, and resolves to whether it worked. With
 * `recoveryKeyTyped`, INVALID_ARGUMENT is the typed recovery key's typo, told in the engine's words (which say which
 * group), as on the Unlock screen.
 */
export function useSecurityAction(action: SecurityAction, recoveryKeyTyped = false) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(
    async (work: () => Promise<void>, onRefused?: (code: string) => void): Promise<boolean> => {
      setBusy(true);
      setError(null);
      try {
        await work();
        return true;
      } catch (cause) {
        onRefused?.(cause instanceof ApiError ? cause.code : 'INTERNAL');
        setError(
          recoveryKeyTyped && cause instanceof ApiError && cause.code === 'INVALID_ARGUMENT'
            ? cause.message
            : securityErrorSentence(action, cause instanceof ApiError ? cause.code : 'INTERNAL'),
        );
        return false;
      } finally {
        setBusy(false);
      }
    },
    [action, recoveryKeyTyped],
  );
  return { busy, error, setError, run };
}

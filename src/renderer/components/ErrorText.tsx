import { CircleAlert } from 'lucide-react';

/** An error in words, announced to screen readers. Renders nothing without a message. */
export function ErrorText({ message, id }: { message: string | null; id?: string }) {
  if (message === null) return null;
  return (
    <p className="error" role="alert" id={id}>
      <CircleAlert size={16} aria-hidden="true" />
      <span>{message}</span>
    </p>
  );
}

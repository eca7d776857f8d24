// The one bridge from a server request's $/progress to a VS Code progress notification: the
// request gets a fresh workDoneToken, its reports move the bar, the notification's Cancel
// button cancels the request (the server aborts nvcc or the GPU run).
import * as vscode from 'vscode';
import { LanguageClient, RequestType, WorkDoneProgress, WorkDoneProgressParams } from 'vscode-languageclient/node';
import { ProgressSteps } from './progressSteps';

/** The request's result, or that the user cancelled it (then there is none to show). */
export type ProgressOutcome<R> = { cancelled: false; result: R } | { cancelled: true };

/**
 * Sends `type` inside a cancellable notification titled `title`, with a fresh workDoneToken in
 * place of any in `params`. Errors other than the cancellation are thrown to the command.
 */
export function requestWithProgress<P extends WorkDoneProgressParams, R>(
  client: LanguageClient,
  title: string,
  type: RequestType<P, R, void>,
  params: P,
  alsoCancelledBy?: vscode.CancellationToken,
): Thenable<ProgressOutcome<R>> {
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title, cancellable: true },
    async (progress, notificationToken) => {
      // Either the notification's Cancel or another control (the results panel's) stops the request.
      const cancel = new vscode.CancellationTokenSource();
      const links = [notificationToken, alsoCancelledBy]
        .filter((t): t is vscode.CancellationToken => !!t)
        .map(t => t.onCancellationRequested(() => cancel.cancel()));
      const token = cancel.token;
      const workDoneToken = `unroll-lens-${Date.now()}-${Math.random().toString(36).slice(2)}`;
      const steps = new ProgressSteps();
      const sub = client.onProgress(WorkDoneProgress.type, workDoneToken, p => {
        const step = steps.next(p);
        if (step) progress.report(step);
      });
      try {
        const result = await client.sendRequest(type, { ...params, workDoneToken }, token);
        return { cancelled: false, result };
      } catch (e) {
        if (token.isCancellationRequested) return { cancelled: true };
        throw e;
      } finally {
        sub.dispose();
        links.forEach(l => l.dispose());
        cancel.dispose();
      }
    },
  );
}

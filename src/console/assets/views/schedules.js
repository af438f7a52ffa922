// Schedules: next fire, last fire and error; enable/disable (PUT with the schedule's
// own fields and `enabled` flipped) and "trigger now".

import { api, query, tenantPath } from '../api.js';
import {
  ErrorBox,
  Loaded,
  Pager,
  html,
  resourceIs,
  useChanges,
  useLoad,
  usePager,
  useState,
  when,
} from '../ui.js';

/** The PUT body that re-creates `schedule` as it is, but with `enabled`. */
function bodyOf(/** @type {any} */ s, /** @type {boolean} */ enabled) {
  const timing =
    s.cron !== null
      ? { cron: s.cron, timezone: s.timezone }
      : s.every_ms !== null
        ? { every_ms: s.every_ms }
        : { at: s.at };
  return {
    agent: s.agent,
    scope: s.scope,
    payload: s.payload,
    ...timing,
    enabled,
    misfire: s.misfire,
    delivery: s.delivery,
  };
}

/** @param {import('../ui.js').ViewProps} props */
export function SchedulesView({ tenant, feed }) {
  const pager = usePager();
  const state = useLoad(
    (signal) =>
      api.get(tenantPath(tenant, `/schedules${query({ limit: 50, cursor: pager.cursor })}`), {
        signal,
      }),
    [tenant, pager.cursor],
  );
  const scheduleChanged = resourceIs('schedule', 'agent');
  useChanges(
    feed,
    state.reload,
    (type, data) => type === 'run.queued' || scheduleChanged(type, data),
  );
  const [problem, setProblem] = useState(/** @type {unknown} */ (null));
  const [note, setNote] = useState('');
  const schedules = state.data?.schedules ?? [];

  async function act(/** @type {() => Promise<any>} */ action, /** @type {string} */ done) {
    setProblem(null);
    try {
      await action();
      setNote(done);
      state.reload();
    } catch (error) {
      setProblem(error);
    }
  }

  return html`<h1>Schedules</h1>
    ${problem && html`<${ErrorBox} error=${problem} />`}
    <p role="status" class="muted">${note}</p>
    <${Loaded} state=${state} empty=${schedules.length === 0 && 'No schedules.'}>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Agent</th>
              <th scope="col">Timing</th>
              <th scope="col">Next fire</th>
              <th scope="col">Last fire</th>
              <th scope="col">Last error</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            ${schedules.map((/** @type {any} */ s) => {
              const path = tenantPath(tenant, `/schedules/${s.name}`);
              return html`<tr key=${s.name}>
                <td>${s.name}</td>
                <td>${s.agent}</td>
                <td class="mono">
                  ${s.cron ? `${s.cron} ${s.timezone}` : s.every_ms ? `every ${s.every_ms} ms` : `at ${s.at}`}
                </td>
                <td>${s.enabled ? when(s.next_fire_at) : 'disabled'}</td>
                <td>
                  ${when(s.last_fired_at)}
                  ${s.last_run_id && html` <a href=${`#/runs/${s.last_run_id}`}>run</a>`}
                </td>
                <td class=${s.last_error ? 'bad' : ''}>${s.last_error ?? '—'}</td>
                <td class="actions">
                  <button
                    type="button"
                    onClick=${() =>
                      act(
                        () => api.put(path, bodyOf(s, !s.enabled)),
                        `${s.name} ${s.enabled ? 'disabled' : 'enabled'}`,
                      )}
                  >
                    ${s.enabled ? 'Disable' : 'Enable'}
                  </button>
                  <button
                    type="button"
                    onClick=${() => act(() => api.post(`${path}/trigger`, {}), `${s.name} triggered`)}
                  >
                    Trigger now
                  </button>
                </td>
              </tr>`;
            })}
          </tbody>
        </table>
      </div>
    <//>
    <${Pager} pager=${pager} nextCursor=${state.data?.next_cursor} label="Schedules" />`;
}

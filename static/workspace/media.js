/* The media player, in the service of the ear: a replay stops at the row's end
 * (to within a frame), a click on a row seeks whether the media plays or not,
 * and the replay speed and pre-roll are the annotator's own settings, kept on
 * the server so that they follow them from browser to browser.
 *
 * The stop is timed, not polled on `timeupdate` (which fires about every
 * 250 ms and so let the next row's first words through): a timer sleeps until
 * just before the row's end, then short steps read the media clock
 * (`currentTime`) until it reaches the end, and pause there. Reading the clock
 * each time makes the stop right even when playback stalls or runs at 0.75×. */
import { useEffect, useRef } from "preact/hooks";
import { api, html } from "./lib.js";

export const SPEEDS = [0.75, 1, 1.25];
export const PREROLLS = [0, 0.25, 0.5, 1];
const SETTINGS_URL = "/api/v1/me/workspace-settings/";

export class Player {
  constructor(session, settings) {
    this.s = session;
    this.media = null;
    this.speed = (settings && settings.replay_speed) || 1;
    this.preroll = (settings && settings.preroll) || 0;
    this.stopAt = null; // media time at which the running replay pauses
    this.timer = null;
    this.replaying = null; // the row being replayed (it keeps the highlight until it ends)
    this.playingIndex = null; // row_index of the row under the playhead
    session.player = this;
  }

  attach(media) {
    this.media = media;
    media.defaultPlaybackRate = this.speed;
    media.playbackRate = this.speed;
    media.addEventListener("playing", () => this.scheduleStop());
    media.addEventListener("ratechange", () => this.scheduleStop());
    media.addEventListener("pause", () => {
      clearTimeout(this.timer);
      this.stopAt = null;
    });
    for (const name of ["timeupdate", "seeked"]) media.addEventListener(name, () => this.highlight());
  }

  /** The row under the playhead (the replayed row keeps it up to its end). */
  highlight() {
    const t = this.media.currentTime;
    const rows = this.s.rows;
    const replayed = this.replaying && rows.find((r) => r.row_index === this.replaying);
    let row = replayed && t >= replayed.start_time - this.preroll - 0.05 && t <= replayed.end_time + 0.05 ? replayed : null;
    if (!row) {
      this.replaying = null;
      row = rows.find((r) => t >= r.start_time && t < r.end_time) || null;
    }
    const index = row ? row.row_index : null;
    if (index !== this.playingIndex) {
      this.playingIndex = index;
      this.s.changed();
    }
  }

  cancelStop() {
    clearTimeout(this.timer);
    this.stopAt = null;
    this.replaying = null;
  }

  scheduleStop() {
    clearTimeout(this.timer);
    const m = this.media;
    if (this.stopAt === null || !m || m.paused) return; // "playing" schedules it again
    const left = (this.stopAt - m.currentTime) / (m.playbackRate || 1);
    if (left <= 0.004) {
      this.stopAt = null;
      m.pause();
      this.lastStop = m.currentTime;
      return;
    }
    // Sleep until ~40 ms before the end, then in short steps read the clock again.
    const wait = left > 0.06 ? (left - 0.04) * 1000 : Math.max(1, left * 1000 - 2);
    this.timer = setTimeout(() => this.scheduleStop(), wait);
  }

  /** Replay the row from its start (less the pre-roll) and stop at its end. */
  replay(row) {
    const m = this.media;
    if (!m || !row) return;
    this.cancelStop();
    m.playbackRate = this.speed;
    m.currentTime = Math.max(0, row.start_time - this.preroll);
    this.stopAt = row.end_time;
    this.replaying = row.row_index;
    const started = m.play();
    if (started) started.catch(() => {});
    this.scheduleStop();
  }

  togglePlay() {
    const m = this.media;
    if (!m) return;
    if (m.paused) {
      const started = m.play();
      if (started) started.catch(() => {});
    } else {
      this.cancelStop();
      m.pause();
    }
  }

  /** Move the playhead to a row: always for a click (`when` "always"), only when paused for the keyboard. */
  follow(row, when = "always") {
    const m = this.media;
    if (!m || (when === "paused" && !m.paused)) return;
    this.cancelStop();
    m.currentTime = row.start_time;
  }

  async save(changes) {
    Object.assign(this, changes.replay_speed !== undefined ? { speed: changes.replay_speed } : {}, changes.preroll !== undefined ? { preroll: changes.preroll } : {});
    if (this.media) {
      this.media.defaultPlaybackRate = this.speed;
      this.media.playbackRate = this.speed;
    }
    this.s.changed();
    const res = await api("PUT", SETTINGS_URL, changes);
    if (res.status !== 200) this.s.setBanner(`Your replay setting was not saved: ${res.json.detail || res.status}.`, "error");
  }
}

export function MediaPanel({ s }) {
  const player = s.player;
  const clip = s.data.clip;
  const ref = useRef(null);
  useEffect(() => {
    if (ref.current) player.attach(ref.current);
  }, []);
  if (!clip.media_url) return html`<div id="player-box"><p class="muted">No media for this clip.</p></div>`;
  const Tag = clip.media_kind === "audio" ? "audio" : "video";
  return html`<div id="player-box">
    <${Tag} ref=${ref} id="player" controls preload="auto" src=${clip.media_url} />
    <div class="player-settings">
      <label>Speed <select id="replay-speed" value=${String(player.speed)} onChange=${(e) => player.save({ replay_speed: parseFloat(e.currentTarget.value) })}>
        ${SPEEDS.map((v) => html`<option key=${v} value=${String(v)}>${v}×</option>`)}
      </select></label>
      <label title="seconds played before the row when it is replayed">Pre-roll <select id="preroll" value=${String(player.preroll)} onChange=${(e) => player.save({ preroll: parseFloat(e.currentTarget.value) })}>
        ${PREROLLS.map((v) => html`<option key=${v} value=${String(v)}>${v} s</option>`)}
      </select></label>
      <span class="muted"><kbd>r</kbd> replay · <kbd>p</kbd> play</span>
    </div>
  </div>`;
}

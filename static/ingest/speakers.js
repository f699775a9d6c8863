// Speaker page: each "Maps to" choice offers the clip's people, which are the participants typed above plus
// Therapist and the group label (data-fixed-entities). When the participants change, every choice is offered
// the new list; a choice that names someone no longer listed stays visible, marked, so nothing changes silently
// (confirming it is refused by the server with the reason).
document.addEventListener("DOMContentLoaded", () => {
  const form = document.querySelector("form[data-speaker-map]");
  if (!form) return;
  const participants = form.querySelector('input[name="participants"]');
  const fixed = form.dataset.fixedEntities.split("|").filter(Boolean);
  const choices = form.querySelectorAll("select[data-speaker-choice]");

  const people = () => {
    const names = participants.value.split(",").map((n) => n.trim()).filter(Boolean);
    return [...new Set([...names, ...fixed])];
  };

  const offer = (select, entities) => {
    const current = select.value;
    const nobody = select.options[0].cloneNode(true); // "— nobody can tell yet"
    const options = entities.map((name) => new Option(name, name));
    if (current && !entities.includes(current)) {
      options.push(new Option(`${current} (not among the participants)`, current));
    }
    select.replaceChildren(nobody, ...options);
    select.value = current;
  };

  participants.addEventListener("input", () => {
    const entities = people();
    choices.forEach((select) => offer(select, entities));
  });
});

// Upload page: lets a lead pick a whole folder and sends each file's path
// inside it, so that sample ids default to <folder>/<file name without extension>
// (browsers only send bare file names with the files themselves).
document.addEventListener("DOMContentLoaded", () => {
  const form = document.querySelector("form[data-ingest-upload]");
  if (!form) return;
  const input = form.querySelector('input[type="file"][name="files"]');
  const paths = form.querySelector('input[name="relative_paths"]');
  const folderToggle = form.querySelector("[data-pick-folder]");
  const picked = form.querySelector("[data-picked]");

  const remember = () => {
    const names = Array.from(input.files, (f) => f.webkitRelativePath || f.name);
    paths.value = JSON.stringify(names);
    picked.replaceChildren(...names.map((name) => {
      const li = document.createElement("li");
      li.textContent = name;
      return li;
    }));
  };

  folderToggle.addEventListener("change", () => {
    input.webkitdirectory = folderToggle.checked;
    input.value = "";
    remember();
  });
  input.addEventListener("change", remember);
});

// Expand or fold every <details> of the report at once. The page works without this script.
document.querySelectorAll("button[data-fold]").forEach(function (button) {
  button.addEventListener("click", function () {
    var open = button.getAttribute("data-fold") === "open";
    document.querySelectorAll("details").forEach(function (d) { d.open = open; });
  });
});
document.body.setAttribute("data-script", "ran");

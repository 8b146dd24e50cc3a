// The page's words for the site's scripts, in its language (project/templatetags/js_texts.py
// writes them into the page as a JSON block): window.pageText(key, values) answers the text
// for `key` with each %(name)s replaced by values[name]; a text with plural forms is chosen by
// values.count under the page language's plural rules. An unknown key answers itself.
// Loaded first (in the head, deferred), so every other script of the page may use it.
(function () {
  var texts = null;
  function loaded() {
    if (texts === null) {
      var element = document.getElementById("js-texts");
      try {
        texts = element ? JSON.parse(element.textContent) : {};
      } catch (error) {
        texts = {};
      }
    }
    return texts;
  }
  window.pageText = function (key, values) {
    values = values || {};
    var found = loaded()[key];
    if (found && typeof found === "object") {
      var rules = new Intl.PluralRules(document.documentElement.lang || "en");
      found = found[rules.select(values.count)] || found.other;
    }
    var result = typeof found === "string" ? found : key;
    Object.keys(values).forEach(function (name) {
      result = result.split("%(" + name + ")s").join(String(values[name]));
    });
    return result;
  };
})();

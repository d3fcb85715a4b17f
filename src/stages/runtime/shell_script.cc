#include "stages/runtime/shell_script.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <unordered_map>

namespace podflow::runtime {
namespace {

// A pod's command line is user input: what reading it may cost is bounded.
constexpr size_t kMaxScriptBytes = 64 * 1024;  // longer: not read
constexpr size_t kMaxWordBytes = 64 * 1024;    // an expansion past this: not read further
constexpr size_t kMaxLogBytes = 1024 * 1024;   // printed lines past this are dropped
constexpr SimDuration kMaxScriptTime{int64_t{10'000} * 365 * 86'400'000};  // past this: never ends

// A word as written: pieces that take $VAR expansion and pieces that do not
// (single-quoted).
struct Piece {
  std::string text;
  bool expand;
};
using Word = std::vector<Piece>;

enum class Joint { kSeq, kAnd, kOr };

struct Command {
  Joint after_prev = Joint::kSeq;
  std::vector<Word> words;
  std::optional<Word> stdout_to;  // > FILE or >> FILE
  bool background = false;        // ... &
  bool unsupported = false;       // a pipe, a subshell, a command substitution
};

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Splits a script into commands. Stops reading structure it does not know
// by marking the command unsupported.
std::vector<Command> Parse(std::string_view s) {
  std::vector<Command> out(1);
  Word word;
  bool in_word = false;
  enum class Target { kWords, kStdout, kDiscard } target = Target::kWords;
  auto end_word = [&] {
    if (!in_word) return;
    Command& c = out.back();
    if (target == Target::kStdout) {
      c.stdout_to = std::move(word);
    } else if (target == Target::kWords) {
      c.words.push_back(std::move(word));
    }
    target = Target::kWords;
    word.clear();
    in_word = false;
  };
  auto add = [&](char ch, bool expand) {
    if (word.empty() || word.back().expand != expand) word.push_back({"", expand});
    word.back().text += ch;
    in_word = true;
  };
  auto next_command = [&](Joint joint) {
    end_word();
    if (out.back().words.empty() && !out.back().unsupported) {
      out.back().after_prev = joint;  // an empty command (";;", leading newline)
      return;
    }
    Command next;
    next.after_prev = joint;
    out.push_back(std::move(next));
  };
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\'') {
      const size_t close = s.find('\'', i + 1);
      if (close == std::string_view::npos) {
        out.back().unsupported = true;
        break;
      }
      for (size_t k = i + 1; k < close; ++k) add(s[k], false);
      in_word = true;
      i = close;
    } else if (c == '"') {
      size_t k = i + 1;
      for (; k < s.size() && s[k] != '"'; ++k) {
        if (s[k] == '\\' && k + 1 < s.size() &&
            std::string_view("\"\\$`").find(s[k + 1]) != std::string_view::npos) {
          add(s[++k], false);
        } else if (s[k] == '`' || (s[k] == '$' && k + 1 < s.size() && s[k + 1] == '(')) {
          out.back().unsupported = true;
          add(s[k], false);
        } else {
          add(s[k], true);
        }
      }
      if (k >= s.size()) {
        out.back().unsupported = true;
        break;
      }
      in_word = true;
      i = k;
    } else if (c == '\\' && i + 1 < s.size()) {
      if (s[i + 1] != '\n') add(s[i + 1], false);
      ++i;
    } else if (c == '#' && !in_word) {
      while (i + 1 < s.size() && s[i + 1] != '\n') ++i;
    } else if (c == ' ' || c == '\t') {
      end_word();
    } else if (c == '\n' || c == ';') {
      next_command(Joint::kSeq);
    } else if (c == '&' && i + 1 < s.size() && s[i + 1] == '&') {
      next_command(Joint::kAnd);
      ++i;
    } else if (c == '|' && i + 1 < s.size() && s[i + 1] == '|') {
      next_command(Joint::kOr);
      ++i;
    } else if (c == '&' && i + 1 < s.size() && s[i + 1] == '>') {
      end_word();
      out.back().unsupported = true;  // &> FILE: both streams
      target = Target::kDiscard;
      i += (i + 2 < s.size() && s[i + 2] == '>') ? 2 : 1;
    } else if (c == '&') {
      out.back().background = true;
      next_command(Joint::kSeq);
    } else if (c == '>' || c == '<') {
      // "2>" / "1>" written as a word just before: which stream.
      bool to_stdout = c == '>';
      if (in_word && word.size() == 1 && word[0].expand &&
          (word[0].text == "1" || word[0].text == "2")) {
        to_stdout = to_stdout && word[0].text == "1";
        word.clear();
        in_word = false;
      } else {
        end_word();
      }
      if (i + 1 < s.size() && s[i + 1] == '>') ++i;
      if (i + 1 < s.size() && s[i + 1] == '&') {  // 2>&1, >&2: a stream into another
        i += 2;
        continue;
      }
      target = to_stdout ? Target::kStdout : Target::kDiscard;
    } else if (c == '|' || c == '(' || c == ')' || c == '`' ||
               (c == '$' && i + 1 < s.size() && s[i + 1] == '(')) {
      out.back().unsupported = true;
      add(c, false);
    } else {
      add(c, true);
    }
  }
  end_word();
  if (out.back().words.empty() && !out.back().unsupported) out.pop_back();
  return out;
}

class Reader {
 public:
  explicit Reader(const EnvList& env) : env_(env) {}

  // `errexit`: the shell was started with -e.
  ScriptReading Run(const std::vector<Command>& script, bool errexit) {
    errexit_ = errexit;
    reading_.behavior.stop_after = model::kNever;  // a shell as PID 1
    for (size_t i = 0; i < script.size() && !done_; ++i) {
      const Command& cmd = script[i];
      if (cmd.after_prev == Joint::kAnd && code_ != 0) continue;
      if (cmd.after_prev == Joint::kOr && code_ == 0) continue;
      const bool last = i + 1 == script.size();
      Execute(cmd, last);
      // -e: a failure ends the script unless an && or || list goes on.
      const bool list_goes_on = !last && script[i + 1].after_prev != Joint::kSeq;
      if (errexit_ && !done_ && code_ != 0 && !list_goes_on) Finish(code_);
    }
    if (!done_) Finish(code_);
    return Done();
  }

  // A command given directly as argv (no shell).
  ScriptReading RunArgv(const std::vector<std::string>& argv) {
    Command cmd;
    for (const std::string& a : argv) cmd.words.push_back(Word{{a, false}});
    reading_.behavior.stop_after = model::kNever;  // known programs as PID 1 ignore SIGTERM
    Execute(cmd, /*last=*/true);
    if (!done_) Finish(code_);
    if (!reading_.behavior.exit_after) reading_.behavior.stop_after.reset();  // an unknown program
    return Done();
  }

 private:
  std::string Expand(const Word& word) {
    std::string out;
    for (const Piece& p : word) {
      if (!p.expand) {
        out += p.text;
        continue;
      }
      for (size_t i = 0; i < p.text.size(); ++i) {
        if (p.text[i] != '$' || i + 1 >= p.text.size()) {
          out += p.text[i];
          continue;
        }
        size_t start = i + 1, end = start;
        const bool braced = p.text[start] == '{';
        if (braced) {
          end = p.text.find('}', start);
          if (end == std::string::npos) {
            out += p.text.substr(i);
            break;
          }
          out += Lookup(p.text.substr(start + 1, end - start - 1));
          i = end;
          continue;
        }
        while (end < p.text.size() && IsNameChar(p.text[end])) ++end;
        if (end == start) {
          out += '$';
          continue;
        }
        out += Lookup(p.text.substr(start, end - start));
        i = end - 1;
        if (out.size() > kMaxWordBytes) break;
      }
      if (out.size() > kMaxWordBytes) {
        overflow_ = true;
        out.clear();
        break;
      }
    }
    return out;
  }

  std::string Lookup(std::string_view name) const {
    const std::string* value = Find(name);
    return value == nullptr ? "" : *value;
  }

  // A variable set by the script replaces its value in place.
  void Set(std::string name, std::string value) {
    for (auto it = env_.rbegin(); it != env_.rend(); ++it) {
      if (it->first == name) {
        it->second = std::move(value);
        return;
      }
    }
    env_.emplace_back(std::move(name), std::move(value));
  }

  const std::string* Find(std::string_view name) const {
    for (auto it = env_.rbegin(); it != env_.rend(); ++it) {
      if (it->first == name) return &it->second;
    }
    return nullptr;
  }

  void Finish(int code) {
    reading_.behavior.exit_after = now_;
    reading_.behavior.exit_code = code;
    done_ = true;
  }

  void RunsForever() {
    reading_.behavior.exit_after = model::kNever;
    done_ = true;
  }

  // The program's long-running process is unknown: say nothing of its end.
  void Unknown() {
    reading_.behavior.exit_after.reset();
    reading_.behavior.exit_code.reset();
    done_ = true;
  }

  ScriptReading Done() {
    if (!lines_.empty()) reading_.behavior.logs = std::move(lines_);
    return std::move(reading_);
  }

  void Print(std::string line, const std::optional<std::string>& file) {
    if (file) {
      File(*file, true);
    } else if (log_bytes_ + line.size() <= kMaxLogBytes) {
      log_bytes_ += line.size() + 1;
      lines_.push_back(std::move(line));
      reading_.log_at.push_back(now_);
    }
  }

  void File(const std::string& path, bool exists) {
    reading_.files.push_back(ScriptFile{now_, path, exists});
  }

  void Execute(const Command& cmd, bool last) {
    std::vector<std::string> w;
    for (const Word& word : cmd.words) w.push_back(Expand(word));
    if (overflow_) {
      Unknown();
      return;
    }
    if (cmd.unsupported || w.empty()) {
      if (cmd.unsupported && last) Unknown();
      code_ = 0;
      return;
    }
    if (cmd.background) {  // runs beside the script; the script goes on
      code_ = 0;
      return;
    }
    // Leading VAR=value words set variables.
    size_t first = 0;
    while (first < w.size() && w[first].find('=') != std::string::npos && w[first].find('=') > 0 &&
           std::all_of(w[first].begin(), w[first].begin() + static_cast<long>(w[first].find('=')),
                       IsNameChar)) {
      const size_t eq = w[first].find('=');
      Set(w[first].substr(0, eq), w[first].substr(eq + 1));
      ++first;
    }
    if (first == w.size()) {
      code_ = 0;
      return;
    }
    std::vector<std::string> args(w.begin() + static_cast<long>(first), w.end());
    std::string program = args[0];
    if (program == "exec" && args.size() > 1) {
      args.erase(args.begin());
      program = args[0];
      last = true;
    }
    if (const size_t slash = program.rfind('/'); slash != std::string::npos)
      program = program.substr(slash + 1);
    std::optional<std::string> out_file;
    if (cmd.stdout_to) out_file = Expand(*cmd.stdout_to);
    if (out_file) File(*out_file, true);

    if (program == "while" || program == "until" || program == "for") {
      RunsForever();
      return;
    }
    if (program == "if" || program == "case" || program == "{" || program == "function") {
      Unknown();
      return;
    }
    if (program == "sleep") {
      SimDuration total{0};
      for (size_t i = 1; i < args.size(); ++i) {
        std::optional<SimDuration> d = ParseSleep(args[i]);
        if (!d) {
          code_ = 1;
          return;
        }
        if (*d == model::kNever) {
          RunsForever();
          return;
        }
        total += *d;
        if (total > kMaxScriptTime) {
          RunsForever();
          return;
        }
      }
      now_ += total;
      if (now_ > kMaxScriptTime) {
        RunsForever();
        return;
      }
      code_ = args.size() > 1 ? 0 : 1;
      return;
    }
    if (program == "exit") {
      int code = code_;
      if (args.size() > 1) {
        int parsed = 0;
        auto [end, ec] = std::from_chars(args[1].data(), args[1].data() + args[1].size(), parsed);
        code = ec == std::errc() && end == args[1].data() + args[1].size() ? (parsed & 0xff) : 2;
      }
      Finish(code);
      return;
    }
    if (program == "set") {
      for (size_t i = 1; i < args.size(); ++i) {
        const std::string& a = args[i];
        if ((a.size() > 1 && a[0] == '-' && a.find('e') != std::string::npos && a[1] != '-' &&
             a[1] != 'o') ||
            (a == "-o" && i + 1 < args.size() && args[i + 1] == "errexit")) {
          errexit_ = true;
        }
      }
      code_ = 0;
      return;
    }
    if (program == "true" || program == ":" || program == "export" || program == "mkdir" ||
        program == "cd") {
      for (size_t i = 1; program == "export" && i < args.size(); ++i) {
        if (const size_t eq = args[i].find('='); eq != std::string::npos && eq > 0) {
          Set(args[i].substr(0, eq), args[i].substr(eq + 1));
        }
      }
      code_ = 0;
      return;
    }
    if (program == "false") {
      code_ = 1;
      return;
    }
    if (program == "echo") {
      size_t i = 1;
      while (i < args.size() && (args[i] == "-n" || args[i] == "-e" || args[i] == "-E")) ++i;
      std::string line;
      for (size_t k = i; k < args.size(); ++k) line += (k > i ? " " : "") + args[k];
      Print(std::move(line), out_file);
      code_ = 0;
      return;
    }
    if (program == "printf" && args.size() > 1) {
      std::string text = args[1];
      while (text.size() >= 2 && text.ends_with("\\n")) text.resize(text.size() - 2);
      Print(std::move(text), out_file);
      code_ = 0;
      return;
    }
    if (program == "printenv" || program == "env") {
      code_ = 0;
      if (args.size() == 1 || program == "env") {
        for (const auto& [name, value] : Visible()) Print(name + "=" + value, out_file);
        return;
      }
      for (size_t i = 1; i < args.size(); ++i) {
        if (const std::string* value = Find(args[i])) {
          Print(*value, out_file);
        } else {
          code_ = 1;
        }
      }
      return;
    }
    if (program == "touch") {
      for (size_t i = 1; i < args.size(); ++i) {
        if (!args[i].starts_with("-")) File(args[i], true);
      }
      code_ = 0;
      return;
    }
    if (program == "rm") {
      for (size_t i = 1; i < args.size(); ++i) {
        if (!args[i].starts_with("-")) File(args[i], false);
      }
      code_ = 0;
      return;
    }
    if ((program == "test" || program == "[") && args.size() >= 3 && args[1].size() == 2 &&
        args[1][0] == '-' && std::string_view("efsd").find(args[1][1]) != std::string_view::npos) {
      code_ = Exists(args[2]) ? 0 : 1;
      return;
    }
    if (program == "ls") {
      // Finishes at once; what a directory holds is not known, so only the
      // names that do not exist are printed (busybox's words).
      code_ = 0;
      for (size_t i = 1; i < args.size(); ++i) {
        if (args[i].starts_with("-") || Exists(args[i])) continue;
        Print("ls: " + args[i] + ": No such file or directory", std::nullopt);
        code_ = 1;
      }
      return;
    }
    if (program == "cat" && args.size() == 2 && !out_file) {
      code_ = Exists(args[1]) ? 0 : 1;
      if (code_ == 0 && last) Unknown();  // cat of a FIFO or a device may never end
      return;
    }
    // Any other program: finishes at once when the script goes on.
    if (last) {
      Unknown();
    } else {
      code_ = 0;
    }
  }

  bool Exists(const std::string& path) const { return reading_.FileExists(path, now_); }

  // The environment once, latest value of each name, in first-seen order.
  EnvList Visible() const {
    EnvList out;
    std::unordered_map<std::string_view, size_t> at;
    for (const auto& [name, value] : env_) {
      auto [it, added] = at.emplace(name, out.size());
      if (added) {
        out.emplace_back(name, value);
      } else {
        out[it->second].second = value;
      }
    }
    return out;
  }

  EnvList env_;
  ScriptReading reading_;
  std::vector<std::string> lines_;
  size_t log_bytes_ = 0;
  SimDuration now_{0};
  int code_ = 0;
  bool done_ = false;
  bool errexit_ = false;
  bool overflow_ = false;  // an expansion grew past kMaxWordBytes
};

bool IsShell(std::string_view program) {
  if (const size_t slash = program.rfind('/'); slash != std::string_view::npos) {
    program = program.substr(slash + 1);
  }
  return program == "sh" || program == "bash" || program == "ash" || program == "dash";
}

}  // namespace

bool ScriptReading::FileExists(std::string_view path, SimDuration since) const {
  bool exists = true;
  bool seen = false;
  for (const ScriptFile& f : files) {
    if (f.path != path) continue;
    if (!seen && f.exists) exists = false;  // created by the script: absent before
    seen = true;
    if (f.at <= since) exists = f.exists;
  }
  return exists;
}

bool ScriptReading::Tracks(std::string_view path) const {
  return std::any_of(files.begin(), files.end(),
                     [&](const ScriptFile& f) { return f.path == path; });
}

std::optional<SimDuration> ParseSleep(std::string_view operand) {
  if (operand == "infinity" || operand == "inf") return model::kNever;
  if (operand.empty()) return std::nullopt;
  double factor = 1.0;
  switch (operand.back()) {
    case 's':
      operand.remove_suffix(1);
      break;
    case 'm':
      factor = 60;
      operand.remove_suffix(1);
      break;
    case 'h':
      factor = 3600;
      operand.remove_suffix(1);
      break;
    case 'd':
      factor = 86400;
      operand.remove_suffix(1);
      break;
    default:
      break;
  }
  double seconds = 0;
  auto [end, ec] = std::from_chars(operand.data(), operand.data() + operand.size(), seconds);
  if (operand.empty() || ec != std::errc() || end != operand.data() + operand.size() ||
      !std::isfinite(seconds) || seconds < 0) {
    return std::nullopt;
  }
  if (seconds * factor > 1e11) return model::kNever;  // thousands of years
  return SimDuration(static_cast<int64_t>(std::llround(seconds * factor * 1000)));
}

ScriptReading ReadCommand(const std::vector<std::string>& argv, const EnvList& env) {
  if (argv.empty()) return {};
  size_t bytes = 0;
  for (const std::string& a : argv) bytes += a.size();
  if (bytes > kMaxScriptBytes) return {};
  Reader reader(env);
  if (IsShell(argv[0])) {
    // sh -c SCRIPT (also -ec, -xc, -e -c ...): the script is the operand.
    bool errexit = false;
    for (size_t i = 1; i < argv.size(); ++i) {
      const std::string& a = argv[i];
      if (a.size() >= 2 && a[0] == '-') errexit |= a.find('e') != std::string::npos;
      if (a.size() >= 2 && a[0] == '-' && a.find('c') != std::string::npos) {
        if (i + 1 >= argv.size()) return {};
        return reader.Run(Parse(argv[i + 1]), errexit);
      }
      if (a.empty() || a[0] != '-') break;
    }
    return {};  // a script file, or an interactive shell
  }
  return reader.RunArgv(argv);
}

}  // namespace podflow::runtime

// Named integers of one line of a harness input file (the SYSTEM file, the memory SPEC): words
// "KEY=VALUE" after the line's keyword, written by gravfm.sim.named_fields.named_line and read by
// name into the structs gravfm_inputs.h generates from the Python dataclasses, so the two sides
// agree by field, not by position. Errors are std::runtime_error naming the key.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

namespace gravfm {

class NamedValues {
public:
    explicit NamedValues(const std::string& text) {
        std::istringstream words(text);
        std::string word;
        while (words >> word) {
            const size_t equals = word.find('=');
            if (equals == std::string::npos || equals == 0) throw std::runtime_error("'" + word + "' is not KEY=VALUE");
            const std::string key = word.substr(0, equals), digits = word.substr(equals + 1);
            char* end = nullptr;
            errno = 0;
            const unsigned long long value = std::strtoull(digits.c_str(), &end, 10);
            if (digits.empty() || digits[0] < '0' || digits[0] > '9' || *end || errno == ERANGE)
                throw std::runtime_error(key + ": '" + digits + "' is not a non-negative integer");
            if (!values_.emplace(key, value).second) throw std::runtime_error(key + " is given twice");
        }
    }

    // Moves the value of `key` into `field`: a missing key, or a value the field cannot hold, is an error.
    template <class T> void take(const char* key, T& field) {
        const auto found = values_.find(key);
        if (found == values_.end()) throw std::runtime_error(std::string("missing ") + key);
        if (found->second > std::numeric_limits<T>::max())
            throw std::runtime_error(std::string(key) + " = " + std::to_string(found->second) + " is too large");
        field = static_cast<T>(found->second);
        values_.erase(found);
    }

    // After every take: a key no field took (renamed on one side) is an error.
    void finish() const {
        if (!values_.empty()) throw std::runtime_error("unknown field " + values_.begin()->first);
    }

private:
    std::map<std::string, unsigned long long> values_;
};

// Fills every struct of `records` (take_fields, generated in gravfm_inputs.h) from `text`.
template <class... Records> void read_fields(const std::string& text, Records&... records) {
    NamedValues values(text);
    (take_fields(values, records), ...);
    values.finish();
}

// The rest of the current line of `file` (after the keyword fscanf read).
inline std::string rest_of_line(FILE* file) {
    std::string line;
    char chunk[512];
    while (std::fgets(chunk, sizeof chunk, file)) {
        line += chunk;
        if (!line.empty() && line.back() == '\n') break;
    }
    return line;
}

}  // namespace gravfm

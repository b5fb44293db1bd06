// The edge memories of a harness run: the SPEC file of its --memory option
// (gravfm.sim.memory_params.memory_file), read-only mappings of the images it names, one
// MemoryModel per memory with the top ports it serves, and their entries of the RESULT JSON.
// Shared by harness.cpp and memory_model_tb.cpp. Errors are std::runtime_error naming the file.
//
//   params KEY=VALUE ...     (the fields of gravfm::MemoryModelParams by name: gravfm_inputs.h)
//   ports P                  (AXI ports per memory)
//   image INDEX PATH         (one per memory, INDEX 0..; PATH runs to the end of the line)
#pragma once

#include "memory_model.h"
#include "named_fields.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace gravfm {

struct MemorySpec {
    MemoryModelParams params{};
    unsigned ports_per_memory = 0;
    std::vector<std::string> images;  // by memory index
};

inline MemorySpec read_memory_spec(const char* path) {
    FILE* file = std::fopen(path, "r");
    if (!file) throw std::runtime_error(std::string("cannot open memory file ") + path);
    MemorySpec spec;
    bool have_params = false;
    char kind[16];
    int line = 0;
    auto fail = [&](const std::string& message) {
        std::fclose(file);
        throw std::runtime_error(std::string(path) + ": line " + std::to_string(line) + ": " + message);
    };
    while (std::fscanf(file, "%15s", kind) == 1) {
        ++line;
        if (!std::strcmp(kind, "params")) {
            try {
                read_fields(rest_of_line(file), spec.params);
            } catch (const std::runtime_error& error) {
                fail(std::string("params: ") + error.what());
            }
            have_params = true;
        } else if (!std::strcmp(kind, "ports")) {
            if (std::fscanf(file, "%u", &spec.ports_per_memory) != 1 || !spec.ports_per_memory)
                fail("ports needs a positive number");
        } else if (!std::strcmp(kind, "image")) {
            unsigned index = 0;
            char rest[4096];
            if (std::fscanf(file, "%u", &index) != 1 || !std::fgets(rest, sizeof rest, file))
                fail("image needs an index and a path");
            std::string image = rest;
            while (!image.empty() && (image.back() == '\n' || image.back() == '\r')) image.pop_back();
            const size_t start = image.find_first_not_of(' ');
            if (start == std::string::npos) fail("image needs a path");
            if (index != spec.images.size()) fail("images must come in index order 0, 1, ...");
            spec.images.push_back(image.substr(start));
        } else {
            fail(std::string("unknown ") + kind);
        }
    }
    std::fclose(file);
    if (!have_params || !spec.ports_per_memory || spec.images.empty())
        throw std::runtime_error(std::string(path) + ": needs params, ports and at least one image");
    return spec;
}

// A file mapped read-only (no copy: images can be gigabytes); an empty file maps to nothing.
class MappedImage {
public:
    explicit MappedImage(const std::string& path) {
        const int fd = ::open(path.c_str(), O_RDONLY);
        if (fd < 0) throw std::runtime_error("cannot open memory image " + path + ": " + std::strerror(errno));
        struct stat status;
        if (::fstat(fd, &status) != 0) {
            ::close(fd);
            throw std::runtime_error("cannot stat memory image " + path);
        }
        size_ = static_cast<uint64_t>(status.st_size);
        if (size_) {
            void* address = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
            if (address == MAP_FAILED) {
                ::close(fd);
                throw std::runtime_error("cannot map memory image " + path + ": " + std::strerror(errno));
            }
            data_ = static_cast<const uint8_t*>(address);
        }
        ::close(fd);  // the mapping stays valid
    }
    ~MappedImage() {
        if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
    }
    MappedImage(const MappedImage&) = delete;
    MappedImage& operator=(const MappedImage&) = delete;

    const uint8_t* data() const { return data_; }
    uint64_t size() const { return size_; }

private:
    const uint8_t* data_ = nullptr;
    uint64_t size_ = 0;
};

// One memory: its image, its model and the ports it serves (model port i is port first_port + i
// of top instance `top`).
struct Memory {
    unsigned top = 0, first_port = 0;
    std::unique_ptr<MappedImage> image;
    std::unique_ptr<MemoryModel> model;
    std::vector<MemoryPortInputs> inputs;  // one per model port, sampled every cycle
};

// The memories of the SPEC at `path` for `tops` instances of a top with `mem_ports` AXI read
// ports of `word_bits`-bit rdata: port i of instance t is served by memory t * (mem_ports / P) + i / P.
inline std::vector<Memory> open_memories(const char* path, unsigned tops, unsigned mem_ports, unsigned word_bits) {
    const MemorySpec spec = read_memory_spec(path);
    const unsigned p = spec.ports_per_memory;
    auto fail = [&](const std::string& message) { throw std::runtime_error(std::string(path) + ": " + message); };
    if (mem_ports % p)
        fail(std::to_string(p) + " ports per memory do not divide the top's " + std::to_string(mem_ports) +
             " memory ports");
    if (spec.params.word_bytes * 8 != word_bits)
        fail("words of " + std::to_string(spec.params.word_bytes) + " bytes, but rdata has " +
             std::to_string(word_bits) + " bits");
    const unsigned per_top = mem_ports / p;
    if (spec.images.size() != static_cast<size_t>(tops) * per_top)
        fail(std::to_string(spec.images.size()) + " images for " + std::to_string(tops * per_top) + " memories");
    std::vector<Memory> memories(spec.images.size());
    for (unsigned m = 0; m < memories.size(); ++m) {
        Memory& memory = memories[m];
        memory.top = m / per_top;
        memory.first_port = (m % per_top) * p;
        memory.image.reset(new MappedImage(spec.images[m]));
        try {
            memory.model.reset(new MemoryModel(spec.params, memory.image->data(), memory.image->size(), p, m));
        } catch (const std::invalid_argument& error) {
            fail("memory " + std::to_string(m) + ": " + error.what());
        }
        memory.inputs.resize(p);
    }
    return memories;
}

// The RESULT JSON's entries (appended to an open object): "memory" (per memory: requests, beats,
// outstanding per port) and "memory_errors" (count; first_port, first_address of the earliest
// error, the lowest global port on a tie, or null). Memory m's port i is global port m * P + i.
inline void print_memories(FILE* file, const std::vector<Memory>& memories) {
    using ull = unsigned long long;
    std::fprintf(file, ", \"memory\": [");
    uint64_t errors = 0, first_cycle = 0, first_port = 0, first_address = 0;
    for (size_t m = 0; m < memories.size(); ++m) {
        const MemoryModel& model = *memories[m].model;
        std::fprintf(file, "%s{\"requests\": %llu, \"beats\": %llu, \"outstanding\": [", m ? ", " : "",
                     static_cast<ull>(model.requests), static_cast<ull>(model.beats));
        for (unsigned k = 0; k < model.ports(); ++k)
            std::fprintf(file, "%s%llu", k ? ", " : "", static_cast<ull>(model.outstanding[k]));
        std::fprintf(file, "]}");
        const uint64_t port = m * model.ports() + model.first_error_port;
        if (model.errors && (!errors || model.first_error_cycle < first_cycle ||
                             (model.first_error_cycle == first_cycle && port < first_port))) {
            first_cycle = model.first_error_cycle;
            first_port = port;
            first_address = model.first_error_address;
        }
        errors += model.errors;
    }
    std::fprintf(file, "], \"memory_errors\": {\"count\": %llu, ", static_cast<ull>(errors));
    if (errors)
        std::fprintf(file, "\"first_port\": %llu, \"first_address\": %llu}", static_cast<ull>(first_port),
                     static_cast<ull>(first_address));
    else
        std::fprintf(file, "\"first_port\": null, \"first_address\": null}");
}

}  // namespace gravfm
